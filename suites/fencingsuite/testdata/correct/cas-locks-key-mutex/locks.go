package fencing

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Locks keeps one atomic pointer per resource. A grant replaces the
// pointer by compare-and-swap, so two Acquires that both saw the resource
// free cannot both win; a release swaps in a released marker that keeps
// the token, so the next grant still counts on from it.
type Locks struct {
	ttl       time.Duration
	resources sync.Map // resource -> *atomic.Pointer[slot]
}

type slot struct {
	grant    task.Grant
	released bool
}

// NewLocks returns a lock service with no grants.
func NewLocks(o task.LockOptions) (*Locks, error) {
	switch {
	case o.TTL < 0:
		return nil, fmt.Errorf("new locks: %w", task.ErrInvalidTTL)
	case o.TTL == 0:
		o.TTL = task.DefaultLockTTL
	}
	return &Locks{ttl: o.TTL}, nil
}

func (l *Locks) slot(resource string) *atomic.Pointer[slot] {
	p, _ := l.resources.LoadOrStore(resource, &atomic.Pointer[slot]{})
	return p.(*atomic.Pointer[slot])
}

// Acquire grants resource to holder, or refuses with ErrLockHeld.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (task.Grant, error) {
	if err := ctx.Err(); err != nil {
		return task.Grant{}, err
	}
	p := l.slot(resource)
	for {
		now := time.Now()
		cur := p.Load()
		var last task.FencingToken
		if cur != nil {
			if !cur.released && now.Before(cur.grant.Expires) {
				return task.Grant{}, fmt.Errorf("acquire %q: %w", resource, task.ErrLockHeld)
			}
			last = cur.grant.Token
		}
		next := &slot{grant: task.Grant{Resource: resource, Holder: holder, Token: last + 1, Expires: now.Add(l.ttl)}}
		if p.CompareAndSwap(cur, next) {
			return next.grant, nil
		}
	}
}

// Release ends g if it is the current grant, or refuses with ErrLockLost.
func (l *Locks) Release(ctx context.Context, g task.Grant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := l.slot(g.Resource)
	for {
		cur := p.Load()
		if cur == nil || cur.released || cur.grant.Token != g.Token || !time.Now().Before(cur.grant.Expires) {
			return fmt.Errorf("release %s: %w", g, task.ErrLockLost)
		}
		if p.CompareAndSwap(cur, &slot{grant: cur.grant, released: true}) {
			return nil
		}
	}
}
