package checkpoint

import (
	"context"
	"fmt"
	"slices"
)

// Store is an actor: one goroutine runs every Load and Commit in turn, so
// a commit's check and write are one step without a mutex.
type Store struct {
	kv   KV
	reqs chan func()
	done chan struct{}
}

func NewStore(kv KV) *Store {
	s := &Store{kv: kv, reqs: make(chan func()), done: make(chan struct{})}
	go func() {
		for {
			select {
			case f := <-s.reqs:
				f()
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// Close stops the store's goroutine.
func (s *Store) Close() error {
	close(s.done)
	return nil
}

func (s *Store) do(f func()) {
	fin := make(chan struct{})
	s.reqs <- func() { f(); close(fin) }
	<-fin
}

func (s *Store) Load(ctx context.Context, taskID string) (cp Checkpoint, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	s.do(func() { cp, ok, err = s.kv.Get(ctx, taskID); cp = withOwnValues(cp) })
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("wal store: load: %w", err)
	}
	return cp, ok, nil
}

func (s *Store) Commit(ctx context.Context, cp Checkpoint) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.do(func() {
		var cur Checkpoint
		cur, _, err = s.kv.Get(ctx, cp.TaskID)
		switch {
		case err != nil:
			err = fmt.Errorf("wal store: %w", err)
		case cp.Token == 0 || cp.Token < cur.Token:
			err = fmt.Errorf("wal store: token %d, task has %d: %w", cp.Token, cur.Token, ErrStaleToken)
		default:
			err = s.kv.Put(ctx, withOwnValues(cp))
		}
	})
	return err
}

// withOwnValues returns cp with a Values slice of its own: the KV may keep
// the slice it is given and hand it out again, so the store copies.
func withOwnValues(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}
