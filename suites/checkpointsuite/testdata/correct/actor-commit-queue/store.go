package checkpoint

import (
	"context"
	"fmt"
	"slices"
)

// Store keeps one checkpoint per task in a KV. One goroutine owns every
// commit: it reads the task's checkpoint, checks the token and writes, one
// request at a time, so no other commit can land between the check and the
// write. Load goes straight to the KV, whose Get is atomic on its own.
type Store struct {
	kv   KV
	reqs chan commitReq
	quit chan struct{}
	done chan struct{}
}

type commitReq struct {
	ctx   context.Context
	cp    Checkpoint
	reply chan error
}

// NewStore returns a store that keeps its checkpoints in kv, and starts the
// goroutine that serialises its commits. Close stops it.
func NewStore(kv KV) *Store {
	s := &Store{kv: kv, reqs: make(chan commitReq), quit: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *Store) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.quit:
			return
		case req := <-s.reqs:
			req.reply <- s.commit(req.ctx, req.cp)
		}
	}
}

func (s *Store) commit(ctx context.Context, cp Checkpoint) error {
	cur, found, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %q: read: %w", cp.TaskID, err)
	}
	if found && cp.Token < cur.Token {
		return fmt.Errorf("commit %q: token %d below %d: %w", cp.TaskID, cp.Token, cur.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, withOwnValues(cp)); err != nil {
		return fmt.Errorf("commit %q: write: %w", cp.TaskID, err)
	}
	return nil
}

// Close stops the store's goroutine.
func (s *Store) Close() error {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
	return nil
}

// Load returns the checkpoint of taskID as last committed, and false when
// there is none.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	cp = withOwnValues(cp)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	return cp, ok, nil
}

// Commit hands cp to the store's goroutine and waits for its verdict.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %q: %w", cp.TaskID, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("commit %q: token 0: %w", cp.TaskID, ErrStaleToken)
	}
	cp.Values = append([]RecordedValue(nil), cp.Values...)
	req := commitReq{ctx: ctx, cp: cp, reply: make(chan error, 1)}
	select {
	case s.reqs <- req:
	case <-s.quit:
		return fmt.Errorf("commit %q: store closed", cp.TaskID)
	}
	return <-req.reply
}

// withOwnValues returns cp with a Values slice of its own: the KV may keep
// the slice it is given and hand it out again, so the store copies.
func withOwnValues(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}
