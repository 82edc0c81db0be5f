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
	grants map[string]Grant // current (maybe expired) grant per resource
	next   FencingToken     // last token handed out
}

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("new locks: TTL %s: %w", o.TTL, ErrInvalidTTL)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &Locks{ttl: ttl, grants: make(map[string]Grant)}, nil
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if g, ok := l.grants[resource]; ok && now.Before(g.Expires) {
		return Grant{}, fmt.Errorf("acquire %q: held by %s: %w", resource, g, ErrLockHeld)
	}
	l.next++
	g := Grant{Resource: resource, Holder: holder, Token: l.next, Expires: now.Add(l.ttl)}
	l.grants[resource] = g
	return g, nil
}

// Release ends g at once.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.grants[g.Resource]
	if !ok || cur.Holder != g.Holder || !time.Now().Before(cur.Expires) {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	delete(l.grants, g.Resource)
	return nil
}
