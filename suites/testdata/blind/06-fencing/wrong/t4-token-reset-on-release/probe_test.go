package fencing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = fakeclock.Now
	_ = time.Second
)

var bg = context.Background()

// memKV is a KV in memory; getHook runs after a Get's read; putErr fails Puts; getErr fails Gets.
type memKV struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	getHook func(key string)
	getErr  error
	putErr  error
}

func newKV() *memKV { return &memKV{m: map[string]FencedValue{}} }

func (k *memKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	if k.getErr != nil {
		k.mu.Unlock()
		return FencedValue{}, false, k.getErr
	}
	v, ok := k.m[key]
	k.mu.Unlock()
	if h := k.getHook; h != nil {
		h(key)
	}
	return v, ok, nil
}

func (k *memKV) Put(ctx context.Context, key string, v FencedValue) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.putErr != nil {
		return k.putErr
	}
	k.m[key] = v
	return nil
}

func (k *memKV) get(key string) FencedValue { k.mu.Lock(); defer k.mu.Unlock(); return k.m[key] }

func locks(t *testing.T, ttl time.Duration) *Locks {
	t.Helper()
	l, err := NewLocks(Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// R4: every grant carries a larger token than every earlier grant, after a release and an expiry too.
func TestProbeTokensGrowAcrossRelease(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		var last FencingToken
		for i := range 6 {
			g, err := l.Acquire(bg, "report", "A")
			if err != nil {
				t.Fatal(err)
			}
			if g.Token <= last {
				t.Fatalf("grant %d: token %d after %d", i, g.Token, last)
			}
			last = g.Token
			if i%2 == 0 {
				if err := l.Release(bg, g); err != nil {
					t.Fatal(err)
				}
			} else {
				fakeclock.Advance(10 * time.Second)
			}
		}
	})
}
