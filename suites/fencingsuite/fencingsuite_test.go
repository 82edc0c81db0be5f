package fencingsuite_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites/fencingsuite"
	"github.com/fourth-outcome/labkit/task"
)

func TestLabIsValid(t *testing.T) {
	if err := fencingsuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := fencingsuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The suite must pass every correct implementation, whatever its style.
// The solution is a map behind one mutex for each component, with one
// token counter for the whole lock service. TestOtherStyles runs the suite
// on a lock service without a mutex, whose every resource counts its own
// tokens and changes hands by compare-and-swap, and on a store that locks
// each key on its own.
func TestOtherStyles(t *testing.T) {
	fencingsuite.Run(t, newCASLocks, newKeyLockedStore)
}

// TestActorStyle runs the suite on a lock service in the Go actor style:
// NewLocks starts one goroutine that owns the grants, and Acquire and
// Release send it requests with a reply channel. It has no Close, so its
// goroutine is still waiting for a request when each case ends.
func TestActorStyle(t *testing.T) {
	fencingsuite.Run(t, newActorLocks, newKeyLockedStore)
}

type actorLocks struct {
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

func newActorLocks(o task.LockOptions) (*actorLocks, error) {
	switch {
	case o.TTL < 0:
		return nil, fmt.Errorf("new locks: %w", task.ErrInvalidTTL)
	case o.TTL == 0:
		o.TTL = task.DefaultLockTTL
	}
	l := &actorLocks{requests: make(chan lockRequest)}
	go l.loop(o.TTL)
	return l, nil
}

// loop owns the grants and the counter: nobody else touches them.
func (l *actorLocks) loop(ttl time.Duration) {
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

func (l *actorLocks) ask(ctx context.Context, r lockRequest) (task.Grant, error) {
	if err := ctx.Err(); err != nil {
		return task.Grant{}, err
	}
	r.reply = make(chan lockReply)
	l.requests <- r
	a := <-r.reply
	return a.grant, a.err
}

func (l *actorLocks) Acquire(ctx context.Context, resource, holder string) (task.Grant, error) {
	return l.ask(ctx, lockRequest{acquire: true, resource: resource, holder: holder})
}

func (l *actorLocks) Release(ctx context.Context, g task.Grant) error {
	_, err := l.ask(ctx, lockRequest{resource: g.Resource, grant: g})
	return err
}

// casLocks keeps one atomic pointer per resource. A grant replaces the
// pointer by compare-and-swap, so two Acquires that both saw the resource
// free cannot both win; a release swaps in a released marker that keeps
// the token, so the next grant still counts on from it.
type casLocks struct {
	ttl       time.Duration
	resources sync.Map // resource -> *atomic.Pointer[slot]
}

type slot struct {
	grant    task.Grant
	released bool
}

func newCASLocks(o task.LockOptions) (*casLocks, error) {
	switch {
	case o.TTL < 0:
		return nil, fmt.Errorf("new locks: %w", task.ErrInvalidTTL)
	case o.TTL == 0:
		o.TTL = task.DefaultLockTTL
	}
	return &casLocks{ttl: o.TTL}, nil
}

func (l *casLocks) slot(resource string) *atomic.Pointer[slot] {
	p, _ := l.resources.LoadOrStore(resource, &atomic.Pointer[slot]{})
	return p.(*atomic.Pointer[slot])
}

func (l *casLocks) Acquire(ctx context.Context, resource, holder string) (task.Grant, error) {
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

func (l *casLocks) Release(ctx context.Context, g task.Grant) error {
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

// keyLockedStore holds one mutex per key across the Get and the Put, so
// writes to different keys never wait for each other.
type keyLockedStore struct {
	kv task.KV

	mu   sync.Mutex
	keys map[string]*sync.Mutex
}

func newKeyLockedStore(kv task.KV) *keyLockedStore {
	return &keyLockedStore{kv: kv, keys: map[string]*sync.Mutex{}}
}

func (s *keyLockedStore) lock(key string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.keys[key]
	if !ok {
		m = &sync.Mutex{}
		s.keys[key] = m
	}
	return m
}

func (s *keyLockedStore) Write(ctx context.Context, token task.FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if token == 0 {
		return task.ErrStaleToken
	}
	m := s.lock(key)
	m.Lock()
	defer m.Unlock()
	cur, _, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q: %w", key, err)
	}
	if token < cur.Token {
		return fmt.Errorf("write %q with %d, key at %d: %w", key, token, cur.Token, task.ErrStaleToken)
	}
	return s.kv.Put(ctx, key, task.FencedValue{Value: value, Token: token})
}

func (s *keyLockedStore) Read(ctx context.Context, key string) (task.FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return task.FencedValue{}, false, err
	}
	return s.kv.Get(ctx, key)
}
