package engine

import "context"

// Memory is a backend in the process's memory. Its jobs are lost with the
// process; it is safe for concurrent use by many goroutines.
type Memory struct {
	// TODO: your fields.
}

// NewMemory returns an empty in-memory backend, or an error wrapping
// ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	return nil, ErrNotImplemented
}

// Submit stores j, visible at once, and returns true; or returns false for
// a job submitted before with the same ID and contents, changing nothing.
// ErrConflict for the same ID with other contents, ErrInvalidJob, ErrFull.
func (m *Memory) Submit(ctx context.Context, j Job) (bool, error) {
	return false, ErrNotImplemented
}

// Lease delivers to worker the visible job that became visible first, or
// returns ErrNoJob.
func (m *Memory) Lease(ctx context.Context, worker string) (Lease, error) {
	return Lease{}, ErrNotImplemented
}

// Checkpoint records that step steps of l's job are done and renews the
// lease from now. ErrLeaseLost unless l is the job's current lease.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	return Lease{}, ErrNotImplemented
}

// Complete marks l's job done. ErrLeaseLost unless l is the current lease.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	return ErrNotImplemented
}

// Fail ends l with cause: the job is visible again after the backoff, or
// dead-lettered. ErrLeaseLost unless l is the current lease.
func (m *Memory) Fail(ctx context.Context, l Lease, cause error) error {
	return ErrNotImplemented
}

// Inspect reports the job with the given ID, or ErrUnknownJob.
func (m *Memory) Inspect(ctx context.Context, id string) (Info, error) {
	return Info{}, ErrNotImplemented
}
