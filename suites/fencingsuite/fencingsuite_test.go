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
