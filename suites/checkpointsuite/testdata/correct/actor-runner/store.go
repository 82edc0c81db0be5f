package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Store fences each task under a mutex of its own, so commits to different
// tasks never wait for each other's KV calls.
type Store struct {
	kv    KV
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func NewStore(kv KV) *Store { return &Store{kv: kv, locks: map[string]*sync.Mutex{}} }

func (s *Store) lock(taskID string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[taskID]
	if !ok {
		l = new(sync.Mutex)
		s.locks[taskID] = l
	}
	return l
}

func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	cp = withOwnValues(cp)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("actor store: %w", err)
	}
	return cp, ok, nil
}

func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cp.Token == 0 {
		return ErrStaleToken
	}
	l := s.lock(cp.TaskID)
	l.Lock()
	defer l.Unlock()
	cur, _, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("actor store: %w", err)
	}
	if cp.Token < cur.Token {
		return fmt.Errorf("actor store: token %d < %d: %w", cp.Token, cur.Token, ErrStaleToken)
	}
	return s.kv.Put(ctx, withOwnValues(cp))
}

// withOwnValues returns cp with a Values slice of its own: the KV may keep
// the slice it is given and hand it out again, so the store copies.
func withOwnValues(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}
