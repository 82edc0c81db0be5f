package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Store keeps one checkpoint per task in a KV, fenced.
type Store struct {
	kv KV

	mu    sync.Mutex
	locks map[string]*taskLock
}

type taskLock struct {
	ch   chan struct{}
	refs int
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, locks: make(map[string]*taskLock)}
}

func cloneCP(cp Checkpoint) Checkpoint {
	if cp.Values != nil {
		cp.Values = append([]RecordedValue(nil), cp.Values...)
	}
	return cp
}

func (s *Store) lockTask(ctx context.Context, id string) (func(), error) {
	s.mu.Lock()
	tl, ok := s.locks[id]
	if !ok {
		tl = &taskLock{ch: make(chan struct{}, 1)}
		s.locks[id] = tl
	}
	tl.refs++
	s.mu.Unlock()
	drop := func() {
		s.mu.Lock()
		tl.refs--
		if tl.refs == 0 {
			delete(s.locks, id)
		}
		s.mu.Unlock()
	}
	select {
	case tl.ch <- struct{}{}:
		return func() { <-tl.ch; drop() }, nil
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
}

// Load returns the checkpoint of taskID, exactly as it was last committed.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	if !ok {
		return Checkpoint{}, false, nil
	}
	return cloneCP(cp), true, nil
}

// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is at least
// the token of the checkpoint the task has.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s: %w", cp, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("commit %s: token 0: %w", cp, ErrStaleToken)
	}
	cp = cloneCP(cp)
	unlock, err := s.lockTask(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %s: %w", cp, err)
	}
	defer unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s: %w", cp, err)
	}
	cur, ok, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %s: get: %w", cp, err)
	}
	if ok && cp.Token < cur.Token {
		return fmt.Errorf("commit %s: task has token %d: %w", cp, cur.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, cp); err != nil {
		return fmt.Errorf("commit %s: put: %w", cp, err)
	}
	return nil
}
