package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = fakeclock.Now
var _ = time.Second
var _ = errors.New

type probeKV struct {
	mu       sync.Mutex
	m        map[string]FencedValue
	getErr   error
	putErr   error
	putFirst bool          // on putErr, store before failing
	gate     chan struct{} // if set, the next Get blocks on it after reading
	entered  chan struct{}
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]FencedValue{}} }

func (k *probeKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	if k.getErr != nil {
		err := k.getErr
		k.mu.Unlock()
		return FencedValue{}, false, err
	}
	v, ok := k.m[key]
	gate, entered := k.gate, k.entered
	k.gate, k.entered = nil, nil
	k.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
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
		if k.putFirst {
			k.m[key] = v
		}
		return k.putErr
	}
	k.m[key] = v
	return nil
}

func mustLocks(t *testing.T, ttl time.Duration) *Locks {
	t.Helper()
	l, err := NewLocks(Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProbeRegrantAtExpiry(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		fakeclock.Advance(10*time.Second - time.Nanosecond)
		if _, err := l.Acquire(ctx, "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("1ns before expiry: got %v, want ErrLockHeld", err)
		}
		fakeclock.Advance(time.Nanosecond)
		if !time.Now().Equal(g.Expires) {
			t.Fatalf("clock %v, expires %v", time.Now(), g.Expires)
		}
		g2, err := l.Acquire(ctx, "report", "B")
		if err != nil {
			t.Fatalf("at Expires exactly: %v, want a grant", err)
		}
		if g2.Token <= g.Token {
			t.Fatalf("token %d after %d", g2.Token, g.Token)
		}
	})
}
