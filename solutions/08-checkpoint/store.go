package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Store keeps one checkpoint per task in a KV, fenced: it refuses a
// checkpoint whose token is lower than the token of the checkpoint it holds
// for the task, so a runner whose grant has ended cannot overwrite the
// progress of the runner that took its task over. It is safe for
// concurrent use. Build it with NewStore.
//
// The KV has no conditional write, so Commit holds mu from the Get that
// reads the task's token to the Put that replaces it: no other commit can
// land in between. One mutex for every task is the simplest correct
// choice.
type Store struct {
	kv KV
	mu sync.Mutex // held across the Get and the Put of every Commit
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv}
}

// Load returns a copy of the checkpoint of taskID, exactly as it was last
// committed, and false when no checkpoint of taskID was ever committed. When the KV
// fails, Load returns its error, wrapped.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	cp, ok, err := s.kv.Get(ctx, taskID)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("load %q: %w", taskID, err)
	}
	// A KV may hand out the slice it holds: the caller gets its own copy,
	// so changing it changes nothing stored.
	return clone(cp), ok, nil
}

// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is at least
// the token of the checkpoint the task has (or the task has none). An equal
// token is accepted: the same runner committing its next step. A lower
// token, or the zero token, is refused with an error wrapping
// ErrStaleToken, and the task keeps its checkpoint. Tasks are fenced
// independently. When the KV fails, Commit returns its error, wrapped; if
// the Get failed, nothing was written.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %q: %w", cp.TaskID, err)
	}
	if cp.Token == 0 {
		return fmt.Errorf("commit %q with token 0: %w (0 is never granted)", cp.TaskID, ErrStaleToken)
	}
	// The check and the write are one step under the lock. Split in two, a
	// zombie's commit could pass the check, wait, and land after the new
	// runner's, moving the task's progress backwards.
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, _, err := s.kv.Get(ctx, cp.TaskID)
	if err != nil {
		// Without the task's token there is no check, so no write.
		return fmt.Errorf("commit %q: read its checkpoint: %w", cp.TaskID, err)
	}
	if cp.Token < cur.Token {
		return fmt.Errorf("commit %q with token %d: %w (its checkpoint has token %d)", cp.TaskID, cp.Token, ErrStaleToken, cur.Token)
	}
	// A KV may keep the slice it is given: it gets a copy, so the caller
	// reusing its Values after Commit changes nothing stored.
	if err := s.kv.Put(ctx, clone(cp)); err != nil {
		return fmt.Errorf("commit %q: %w", cp.TaskID, err)
	}
	return nil
}
