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

func TestProbeFailedPutRaisesNoFence(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		if err := s.Write(ctx, 10, "report", "v10"); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("kv put down")
		kv.set(func(k *probeKV) { k.putErr = boom })
		if err := s.Write(ctx, 20, "report", "v20"); !errors.Is(err, boom) {
			t.Fatalf("failing put: got %v, want the KV error", err)
		}
		kv.set(func(k *probeKV) { k.putErr = nil })
		if err := s.Write(ctx, 15, "report", "v15"); err != nil {
			t.Fatalf("write 15 over stored 10 after a failed 20: %v", err)
		}
		v, _, _ := s.Read(ctx, "report")
		if v.Token != 15 {
			t.Fatalf("key holds %v", v)
		}
	})
}
