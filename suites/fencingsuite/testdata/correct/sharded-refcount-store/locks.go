package fencing

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"
)

// Locks is an in-memory lock service split into 16 shards by a hash of the
// resource name, each with its own mutex and map, so that Acquires of
// different resources rarely wait for each other. One atomic counter
// numbers every grant; a grant takes its number inside its shard's lock, so
// a resource's grants are numbered in the order they are made.
type Locks struct {
	ttl    time.Duration
	last   atomic.Uint64
	shards [16]shard
}

type shard struct {
	mu     sync.Mutex
	grants map[string]Grant
}

// NewLocks returns a lock service with no grants.
func NewLocks(o Options) (*Locks, error) {
	if o.TTL < 0 {
		return nil, fmt.Errorf("new locks: TTL %v: %w", o.TTL, ErrInvalidTTL)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	l := &Locks{ttl: o.TTL}
	for i := range l.shards {
		l.shards[i].grants = map[string]Grant{}
	}
	return l, nil
}

func (l *Locks) shard(resource string) *shard {
	h := fnv.New32a()
	h.Write([]byte(resource))
	return &l.shards[h.Sum32()%uint32(len(l.shards))]
}

// Acquire grants resource to holder until TTL from now.
func (l *Locks) Acquire(ctx context.Context, resource, holder string) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, fmt.Errorf("acquire %q: %w", resource, err)
	}
	sh := l.shard(resource)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := time.Now()
	if cur, ok := sh.grants[resource]; ok && now.Before(cur.Expires) {
		return Grant{}, fmt.Errorf("acquire %q: %w by %s", resource, ErrLockHeld, cur.Holder)
	}
	g := Grant{Resource: resource, Holder: holder, Token: FencingToken(l.last.Add(1)), Expires: now.Add(l.ttl)}
	sh.grants[resource] = g
	return g, nil
}

// Release ends g at once when it is the current grant of its resource.
func (l *Locks) Release(ctx context.Context, g Grant) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s: %w", g, err)
	}
	sh := l.shard(g.Resource)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	cur, ok := sh.grants[g.Resource]
	if !ok || cur.Token != g.Token || !time.Now().Before(cur.Expires) {
		return fmt.Errorf("release %s: %w", g, ErrLockLost)
	}
	delete(sh.grants, g.Resource)
	return nil
}
