package fencing

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Locks is an in-memory lock service: it grants leases on named resources,
// each with a fencing token. It must be safe for concurrent use. Build it
// with NewLocks.
type Locks struct {
	ttl time.Duration

	mu     sync.Mutex
	grants map[string]Grant        // current grant of each resource, if any
	last   map[string]FencingToken // last token granted for each resource
}

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("new locks: TTL %v: %w", o.TTL, ErrInvalidTTL)
	}
	ttl := o.TTL
	return &Locks{ttl: ttl, grants: map[string]Grant{}, last: map[string]FencingToken{}}, nil
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if cur, ok := l.grants[resource]; ok && now.Before(cur.Expires) {
		return Grant{}, fmt.Errorf("acquire %q: held by %s: %w", resource, cur.Holder, ErrLockHeld)
	}
	tok := l.last[resource] + 1
	l.last[resource] = tok
	g := Grant{Resource: resource, Holder: holder, Token: tok, Expires: now.Add(l.ttl)}
	l.grants[resource] = g
	return g, nil
}

// Release ends g at once when it is the current grant of its resource.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.grants[g.Resource]
	if !ok || cur.Token != g.Token || !time.Now().Before(cur.Expires) {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	delete(l.grants, g.Resource)
	return nil
}
