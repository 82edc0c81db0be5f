package fencing

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Locks is an in-memory lock service. This design keeps one record per
// resource in a sync.Map, each with its own mutex: the map only finds (or
// creates, once) the record, and every decision about a resource is made
// under that resource's mutex. Records are never deleted, so a resource's
// token counter survives expiries and releases.
type Locks struct {
	ttl time.Duration
	res sync.Map // resource name -> *resource
}

type resource struct {
	mu    sync.Mutex
	last  FencingToken // the last token granted
	cur   Grant        // the latest grant
	ended bool         // cur was released
}

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("fencing: TTL %v: %w", o.TTL, ErrInvalidTTL)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &Locks{ttl: ttl}, nil
}

func (l *Locks) record(name string) *resource {
	if r, ok := l.res.Load(name); ok {
		return r.(*resource)
	}
	r, _ := l.res.LoadOrStore(name, &resource{})
	return r.(*resource)
}

// holds reports whether r's latest grant still holds at now.
func (r *resource) holds(now time.Time) bool {
	return r.last != 0 && !r.ended && now.Before(r.cur.Expires)
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("fencing: acquire %q: %w", resource, err)
	}
	r := l.record(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.holds(now) {
		return Grant{}, fmt.Errorf("fencing: acquire %q for %s: held by %s: %w", resource, holder, r.cur.Holder, ErrLockHeld)
	}
	r.last++
	r.cur = Grant{Resource: resource, Holder: holder, Token: r.last, Expires: now.Add(l.ttl)}
	r.ended = false
	return r.cur, nil
}

// Release ends g at once.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fencing: release %s: %w", g, err)
	}
	v, ok := l.res.Load(g.Resource)
	if !ok {
		return fmt.Errorf("fencing: release %s: never granted: %w", g, ErrLockLost)
	}
	r := v.(*resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	if g.Token == 0 || r.cur.Token != g.Token || !r.holds(time.Now()) {
		return fmt.Errorf("fencing: release %s: %w", g, ErrLockLost)
	}
	r.ended = true
	return nil
}
