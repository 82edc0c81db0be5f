package fencing

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Locks is an in-memory lock service: it grants leases on named resources,
// each with a fencing token. It is safe for concurrent use. Build it with
// NewLocks.
//
// One counter numbers every grant of every resource, so tokens increase
// across the whole service, which is more than a resource needs (its own
// grants increasing) and costs nothing. A grant ends by itself at its
// Expires: Acquire compares the clock with it, so no timer and no sweeper
// is needed.
type Locks struct {
	ttl time.Duration

	mu     sync.RWMutex
	last   FencingToken     // the token of the latest grant, of any resource
	grants map[string]Grant // the latest grant of each resource, maybe expired or released
}

// NewLocks returns a lock service with no grants. o.TTL is how long a grant
// lasts; zero means DefaultTTL, and a negative TTL is an error wrapping
// ErrInvalidTTL.
func NewLocks(o Options) (*Locks, error) {
	switch {
	case o.TTL < 0:
		return nil, fmt.Errorf("new locks: TTL %v: %w", o.TTL, ErrInvalidTTL)
	case o.TTL == 0:
		o.TTL = DefaultTTL
	}
	return &Locks{ttl: o.TTL, grants: map[string]Grant{}}, nil
}

// Acquire grants resource to holder until TTL from now, with a token larger
// than every token granted before. While an earlier grant of resource
// holds, it returns an error wrapping ErrLockHeld, whoever asks, the
// current holder included. It never waits for the resource to become free.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	now := time.Now()
	// A fast refusal under the read lock: a held resource is the common
	// case under contention, and readers do not wait for each other.
	l.mu.RLock()
	cur, held := l.grants[resource]
	l.mu.RUnlock()
	if held && holds(cur, now) {
		return Grant{}, fmt.Errorf("acquire %q for %s: %w by %s (token %d)", resource, holder, ErrLockHeld, cur.Holder, cur.Token)
	}
	// Free a moment ago: the write lock decides, looking again, and takes
	// the token in the same step.
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.grants[resource]; ok && holds(cur, now) {
		return Grant{}, fmt.Errorf("acquire %q for %s: %w by %s (token %d) until %s",
			resource, holder, ErrLockHeld, cur.Holder, cur.Token, cur.Expires.Format(time.RFC3339Nano))
	}
	l.last++
	g := Grant{Resource: resource, Holder: holder, Token: l.last, Expires: now.Add(l.ttl)}
	l.grants[resource] = g
	return g, nil
}

// Release ends g at once: the resource is free for the next Acquire. It
// returns an error wrapping ErrLockLost, and changes nothing, when g is not
// the current grant of its resource: it expired, it was released already,
// or the resource was granted again since. Grants are told apart by their
// token, never by their holder's name: a worker that restarts under the
// same name is a different holder.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.grants[g.Resource]
	if !ok || cur.Token != g.Token || !holds(cur, now) {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	delete(l.grants, g.Resource)
	return nil
}

// holds reports whether g is still in force at now: until its Expires,
// and not at it. A released grant is no longer in l.grants.
func holds(g Grant, now time.Time) bool {
	return now.Before(g.Expires)
}
