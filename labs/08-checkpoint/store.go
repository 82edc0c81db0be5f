package checkpoint

import "context"

// Store keeps one checkpoint per task in a KV, fenced: it refuses a
// checkpoint whose token is lower than the token of the checkpoint it holds
// for the task, so a runner whose grant has ended cannot overwrite the
// progress of the runner that took its task over. It must be safe for
// concurrent use. Build it with NewStore.
type Store struct {
	// TODO: the KV, and whatever makes a commit's check and its write one
	// step.
}

// NewStore returns a store that keeps its checkpoints in kv.
func NewStore(kv KV) *Store {
	// TODO: implement. Start with the README's "What to implement".
	return &Store{}
}

// Load returns the checkpoint of taskID, exactly as it was last committed,
// and false when no checkpoint of taskID was ever committed. When the KV
// fails, Load returns its error, wrapped.
func (s *Store) Load(ctx context.Context, taskID string) (Checkpoint, bool, error) {
	return Checkpoint{}, false, ErrNotImplemented
}

// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is at least
// the token of the checkpoint the task has (or the task has none). An equal
// token is accepted: the same runner committing its next step. A lower
// token, or the zero token, is refused with an error wrapping
// ErrStaleToken, and the task keeps its checkpoint. Tasks are fenced
// independently. When the KV fails, Commit returns its error, wrapped; if
// the Get failed, nothing was written.
func (s *Store) Commit(ctx context.Context, cp Checkpoint) error {
	return ErrNotImplemented
}
