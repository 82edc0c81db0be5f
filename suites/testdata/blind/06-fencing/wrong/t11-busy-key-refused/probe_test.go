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

func TestProbeHigherTokenWaitsNotRefused(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		gate, entered := make(chan struct{}), make(chan struct{})
		kv.mu.Lock()
		kv.gate, kv.entered = gate, entered
		kv.mu.Unlock()
		errs := make(chan error, 1)
		go func() { errs <- s.Write(ctx, 3, "k", "three") }()
		<-entered
		done := make(chan error, 1)
		go func() { done <- s.Write(ctx, 5, "k", "five") }()
		fakeclock.Wait()
		close(gate)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("higher token arriving during another write: %v, want accepted", err)
		}
		v, _, _ := s.Read(ctx, "k")
		if v.Token != 5 {
			t.Fatalf("key ends at %v", v)
		}
	})
}
