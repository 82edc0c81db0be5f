package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Store keeps one checkpoint per task in a KV, fenced. It must be safe for
// concurrent use. Build it with NewStore.
type Store struct {
	kv KV

	mu    sync.Mutex
	locks map[string]*taskLock
}

// taskLock serialises the commits of one task; refs counts the commits
// holding or waiting for it, so the entry is dropped only when nobody does.
type taskLock struct {
	ch   chan struct{}
	refs int
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, locks: make(map[string]*taskLock)}
}

func copyValues(v []RecordedValue) []RecordedValue {
	if v == nil {
		return nil
	}
	out := make([]RecordedValue, len(v))
	copy(out, v)
	return out
}

func (s *Store) lock(ctx context.Context, taskID string) (func(), error) {
	s.mu.Lock()
	l, ok := s.locks[taskID]
	if !ok {
		l = &taskLock{ch: make(chan struct{}, 1)}
		s.locks[taskID] = l
	}
	l.refs++
	s.mu.Unlock()

	drop := func() {
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.locks, taskID)
		}
		s.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
	return func() {
		<-l.ch
		drop()
	}, nil
}

// Load returns the checkpoint of taskID, exactly as it was last committed,
// and false when no checkpoint of taskID was ever committed.
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
	cp.Values = copyValues(cp.Values)
	return cp, true, nil
}

// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is at least
// the token of the checkpoint the task has (or the task has none).
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s: %w", cp, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("commit %s: zero token: %w", cp, ErrStaleToken)
	}
	unlock, err := s.lock(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %s: %w", cp, err)
	}
	defer unlock()
	cur, ok, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %s: read: %w", cp, err)
	}
	if ok && cp.Token < cur.Token {
		return fmt.Errorf("commit %s: task holds token %d: %w", cp, cur.Token, ErrStaleToken)
	}
	cp.Values = copyValues(cp.Values)
	if err := s.kv.Put(ctx, cp); err != nil {
		return fmt.Errorf("commit %s: write: %w", cp, err)
	}
	return nil
}
