package checkpoint

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
)

const stripes = 64

// Store keeps one checkpoint per task in a KV. Commits are serialised per
// stripe: a fixed array of mutexes indexed by a hash of the task ID, so two
// commits of one task never interleave.
type Store struct {
	kv   KV
	seed maphash.Seed
	mu   [stripes]sync.Mutex
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, seed: maphash.MakeSeed()}
}

func (s *Store) stripe(taskID string) *sync.Mutex {
	return &s.mu[maphash.String(s.seed, taskID)%stripes]
}

func cloneCP(cp Checkpoint) Checkpoint {
	if cp.Values != nil {
		cp.Values = append([]RecordedValue(nil), cp.Values...)
	}
	return cp
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

// Commit stores cp if its token is not zero and at least the stored one's.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s: %w", cp.TaskID, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("commit %s: token 0: %w", cp.TaskID, ErrStaleToken)
	}
	m := s.stripe(cp.TaskID)
	m.Lock()
	defer m.Unlock()
	cur, ok, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("commit %s: get: %w", cp.TaskID, err)
	}
	if ok && cp.Token < cur.Token {
		return fmt.Errorf("commit %s: task holds token %d: %w", cp.TaskID, cur.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, cp); err != nil {
		return fmt.Errorf("commit %s: put: %w", cp.TaskID, err)
	}
	return nil
}
