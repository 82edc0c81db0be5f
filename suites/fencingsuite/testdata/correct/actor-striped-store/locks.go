package fencing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Locks is an in-memory lock service. One goroutine, started by NewLocks,
// owns the grants and the counter; Acquire and Release send it requests on
// a channel and wait for the answer. Close stops it.
type Locks struct {
	ttl     time.Duration
	reqs    chan func()
	quit    chan struct{}
	closing sync.Once

	// Owned by the actor goroutine.
	last   FencingToken
	grants map[string]Grant
}

var errClosed = errors.New("fencing: lock service closed")

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("new locks: TTL %v: %w", o.TTL, ErrInvalidTTL)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	l := &Locks{ttl: o.TTL, reqs: make(chan func()), quit: make(chan struct{}), grants: map[string]Grant{}}
	go func() {
		for {
			select {
			case f := <-l.reqs:
				f()
			case <-l.quit:
				return
			}
		}
	}()
	return l, nil
}

// Close stops the lock service's goroutine.
func (l *Locks) Close() error {
	l.closing.Do(func() { close(l.quit) })
	return nil
}

func (l *Locks) do(f func()) error {
	done := make(chan struct{})
	select {
	case l.reqs <- func() { f(); close(done) }:
		<-done
		return nil
	case <-l.quit:
		return errClosed
	}
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	var g Grant
	var err error
	if cerr := l.do(func() {
		now := time.Now()
		if cur, ok := l.grants[resource]; ok && now.Before(cur.Expires) {
			err = fmt.Errorf("acquire %q: %w by %s", resource, ErrLockHeld, cur.Holder)
			return
		}
		l.last++
		g = Grant{Resource: resource, Holder: holder, Token: l.last, Expires: now.Add(l.ttl)}
		l.grants[resource] = g
	}); cerr != nil {
		return Grant{}, cerr
	}
	return g, err
}

// Release ends g at once when it is the current grant of its resource.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	var err error
	if cerr := l.do(func() {
		cur, ok := l.grants[g.Resource]
		if !ok || cur.Token != g.Token || !time.Now().Before(cur.Expires) {
			err = fmt.Errorf("release %s: %w", g, ErrLockLost)
			return
		}
		delete(l.grants, g.Resource)
	}); cerr != nil {
		return cerr
	}
	return err
}
