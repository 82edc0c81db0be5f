package checkpoint

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
)

// shards is how many locks a Store stripes its tasks over: two commits of
// one task always take the same lock, commits of different tasks mostly
// take different ones.
const shards = 32

// Store keeps one checkpoint per task in a KV, fenced. This design stripes
// the tasks over a fixed array of mutexes by a hash of the task ID: a
// commit's Get and Put run under its task's stripe, so no other commit of
// the task lands between them, while other tasks mostly go on in parallel.
type Store struct {
	kv   KV
	seed maphash.Seed
	mu   [shards]sync.Mutex
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, seed: maphash.MakeSeed()}
}

func (s *Store) stripe(taskID string) *sync.Mutex {
	return &s.mu[maphash.String(s.seed, taskID)%shards]
}

func clone(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}

// Load returns the checkpoint of taskID, exactly as it was last committed,
// and false when no checkpoint of taskID was ever committed.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: load %q: %w", taskID, err)
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: load %q: %w", taskID, err)
	}
	if !ok {
		return Checkpoint{}, false, nil
	}
	return clone(cp), true, nil
}

// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is at least
// the token of the checkpoint the task has (or the task has none).
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("checkpoint: commit %q: %w", cp.TaskID, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("checkpoint: commit %q with the zero token: %w", cp.TaskID, ErrStaleToken)
	}
	cp = clone(cp)
	mu := s.stripe(cp.TaskID)
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("checkpoint: commit %q: %w", cp.TaskID, err)
	}
	old, ok, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("checkpoint: commit %q: reading the current checkpoint: %w", cp.TaskID, err)
	}
	if ok && cp.Token < old.Token {
		return fmt.Errorf("checkpoint: commit %q with token %d, task holds %d: %w", cp.TaskID, cp.Token, old.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, cp); err != nil {
		return fmt.Errorf("checkpoint: commit %q: %w", cp.TaskID, err)
	}
	return nil
}
