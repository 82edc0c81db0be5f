package fencing

import (
	"context"
	"fmt"
)

// Locks is an in-memory lock service: it grants leases on named resources,
// each with a fencing token. It must be safe for concurrent use. Build it
// with NewLocks.
type Locks struct {
	// TODO: the TTL, the grants, the token counter, and whatever keeps
	// concurrent callers safe.
}

// NewLocks returns a lock service with no grants. o.TTL is how long a grant
// lasts; zero means DefaultTTL, and a negative TTL is an error wrapping
// ErrInvalidTTL.
func NewLocks(o Options) (*Locks, error) {
	// TODO: implement. Start with the README's "What to implement".
	return nil, fmt.Errorf("new locks: %w", ErrNotImplemented)
}

// Acquire grants resource to holder until TTL from now, with a token larger
// than every token granted before for resource, and never zero. While an
// earlier grant of resource holds, it returns an error wrapping
// ErrLockHeld, whoever asks, the current holder included. It never waits
// for the resource to become free. When ctx is done it returns an error
// wrapping ctx.Err() and grants nothing.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	// TODO: implement.
	return Grant{}, fmt.Errorf("acquire %q: %w", resource, ErrNotImplemented)
}

// Release ends g at once: the resource is free for the next Acquire. It
// returns an error wrapping ErrLockLost, and changes nothing, when g is not
// the current grant of its resource: it expired, it was released already,
// or the resource was granted again since. When ctx is done it returns an
// error wrapping ctx.Err() and releases nothing.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	// TODO: implement.
	return fmt.Errorf("release %s: %w", g, ErrNotImplemented)
}
