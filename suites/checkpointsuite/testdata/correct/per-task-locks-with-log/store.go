package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Store keeps one checkpoint per task in a KV, with one mutex per task (so
// commits to different tasks never wait for each other), and an in-memory
// log of every commit it accepted, for an operator.
type Store struct {
	kv    KV
	locks sync.Map // task ID -> *sync.Mutex

	logMu sync.Mutex
	log   []Checkpoint
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store { return &Store{kv: kv} }

func (s *Store) lock(taskID string) *sync.Mutex {
	m, _ := s.locks.LoadOrStore(taskID, new(sync.Mutex))
	return m.(*sync.Mutex)
}

// Log returns a copy of every checkpoint the store accepted, in order.
func (s *Store) Log() []Checkpoint {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]Checkpoint, len(s.log))
	for i, c := range s.log {
		c.Values = slices.Clone(c.Values)
		out[i] = c
	}
	return out
}

// Load returns the checkpoint of taskID as last committed.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if ctx.Err() != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint store: load %s: %w", taskID, ctx.Err())
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	cp = withOwnValues(cp)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint store: load %s: %w", taskID, err)
	}
	return cp, ok, nil
}

// Commit stores cp if its token is not zero and not below the task's.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("checkpoint store: commit %s: %w", cp.TaskID, ctx.Err())
	case cp.Token == 0:
		return fmt.Errorf("checkpoint store: commit %s: %w", cp.TaskID, ErrStaleToken)
	}
	m := s.lock(cp.TaskID)
	m.Lock()
	defer m.Unlock()
	cur, found, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		return fmt.Errorf("checkpoint store: commit %s: %w", cp.TaskID, err)
	}
	if found && cur.Token > cp.Token {
		return fmt.Errorf("checkpoint store: commit %s: token %d, task at %d: %w", cp.TaskID, cp.Token, cur.Token, ErrStaleToken)
	}
	cp.Values = slices.Clone(cp.Values)
	if err := s.kv.Put(ctx, withOwnValues(cp)); err != nil {
		return fmt.Errorf("checkpoint store: commit %s: %w", cp.TaskID, err)
	}
	s.logMu.Lock()
	s.log = append(s.log, cp)
	s.logMu.Unlock()
	return nil
}

// withOwnValues returns cp with a Values slice of its own: the KV may keep
// the slice it is given and hand it out again, so the store copies.
func withOwnValues(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}
