package fencing

import (
	"context"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Locks is a lock service in the Go actor style: NewLocks starts one
// goroutine that owns the grants and the counter, and Acquire and Release
// send it requests with a reply channel.
type Locks struct {
	requests chan lockRequest
}

type lockRequest struct {
	acquire  bool
	resource string
	holder   string
	grant    task.Grant // for a release
	reply    chan lockReply
}

type lockReply struct {
	grant task.Grant
	err   error
}

// NewLocks returns a lock service with no grants and starts its goroutine.
func NewLocks(o task.LockOptions) (*Locks, error) {
	switch {
	case o.TTL < 0:
		return nil, fmt.Errorf("new locks: %w", task.ErrInvalidTTL)
	case o.TTL == 0:
		o.TTL = task.DefaultLockTTL
	}
	l := &Locks{requests: make(chan lockRequest)}
	go l.loop(o.TTL)
	return l, nil
}

// loop owns the grants and the counter: nobody else touches them.
func (l *Locks) loop(ttl time.Duration) {
	grants := map[string]task.Grant{}
	var last task.FencingToken
	for r := range l.requests {
		now := time.Now()
		cur, ok := grants[r.resource]
		switch {
		case r.acquire && ok && now.Before(cur.Expires):
			r.reply <- lockReply{err: fmt.Errorf("acquire %q: %w", r.resource, task.ErrLockHeld)}
		case r.acquire:
			last++
			g := task.Grant{Resource: r.resource, Holder: r.holder, Token: last, Expires: now.Add(ttl)}
			grants[r.resource] = g
			r.reply <- lockReply{grant: g}
		case !ok || cur.Token != r.grant.Token || !now.Before(cur.Expires):
			r.reply <- lockReply{err: fmt.Errorf("release %s: %w", r.grant, task.ErrLockLost)}
		default:
			delete(grants, r.resource)
			r.reply <- lockReply{}
		}
	}
}

func (l *Locks) ask(ctx context.Context, r lockRequest) (task.Grant, error) {
	if err := ctx.Err(); err != nil {
		return task.Grant{}, err
	}
	r.reply = make(chan lockReply)
	l.requests <- r
	a := <-r.reply
	return a.grant, a.err
}

// Acquire grants resource to holder, or refuses with ErrLockHeld.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (task.Grant, error) {
	return l.ask(ctx, lockRequest{acquire: true, resource: resource, holder: holder})
}

// Release ends g if it is the current grant, or refuses with ErrLockLost.
func (l *Locks) Release(ctx context.Context, g task.Grant) error {
	_, err := l.ask(ctx, lockRequest{resource: g.Resource, grant: g})
	return err
}
