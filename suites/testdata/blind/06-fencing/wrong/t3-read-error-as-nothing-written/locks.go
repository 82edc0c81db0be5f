package fencing

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Locks keeps one entry per resource in a sync.Map; each entry has its own
// mutex, so resources never contend with each other. Tokens come from one
// counter shared by every resource, drawn while the resource's mutex is
// held, so that each resource sees its tokens increase.
type Locks struct {
	ttl     time.Duration
	entries sync.Map // resource -> *lockEntry
	counter atomic.Uint64
}

type lockEntry struct {
	mu      sync.Mutex
	held    bool
	token   FencingToken
	expires time.Time
}

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("new locks: TTL %v: %w", o.TTL, ErrInvalidTTL)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &Locks{ttl: ttl}, nil
}

func (l *Locks) entry(resource string) *lockEntry {
	if e, ok := l.entries.Load(resource); ok {
		return e.(*lockEntry)
	}
	e, _ := l.entries.LoadOrStore(resource, &lockEntry{})
	return e.(*lockEntry)
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	e := l.entry(resource)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if e.held && now.Before(e.expires) {
		return Grant{}, fmt.Errorf("acquire %q for %s: %w", resource, holder, ErrLockHeld)
	}
	tok := FencingToken(l.counter.Add(1))
	e.held, e.token, e.expires = true, tok, now.Add(l.ttl)
	return Grant{Resource: resource, Holder: holder, Token: tok, Expires: e.expires}, nil
}

// Release ends g at once.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	v, ok := l.entries.Load(g.Resource)
	if !ok {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	e := v.(*lockEntry)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held || e.token != g.Token || g.Token == 0 || !time.Now().Before(e.expires) {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	e.held = false
	return nil
}
