package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = time.Second
var _ sync.Mutex

// probeKV is an in-memory KV whose calls can fail or pause.
type probeKV struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	getErr  error
	putErr  error
	getHook func(key string) // runs after Get read the key, before it returns
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]FencedValue{}} }

func (k *probeKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	v, ok := k.m[key]
	err, hook := k.getErr, k.getHook
	k.mu.Unlock()
	if err != nil {
		return FencedValue{}, false, err
	}
	if hook != nil {
		hook(key)
	}
	return v, ok, nil
}

func (k *probeKV) Put(ctx context.Context, key string, v FencedValue) error {
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

func (k *probeKV) set(f func(k *probeKV)) { k.mu.Lock(); f(k); k.mu.Unlock() }

func mustLocks(t *testing.T, ttl time.Duration) *Locks {
	t.Helper()
	l, err := NewLocks(Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProbeTokenIncreasesAfterRelease(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g1, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, g1); err != nil {
			t.Fatal(err)
		}
		g2, err := l.Acquire(ctx, "report", "B")
		if err != nil {
			t.Fatal(err)
		}
		if g2.Token <= g1.Token {
			t.Fatalf("token after release %d, not larger than %d", g2.Token, g1.Token)
		}
	})
}
