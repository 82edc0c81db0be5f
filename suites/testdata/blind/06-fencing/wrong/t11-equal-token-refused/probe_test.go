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

func TestProbeEqualTokenAccepted(t *testing.T) {
	ctx := context.Background()
	s := NewStore(newProbeKV())
	if err := s.Write(ctx, 33, "report", "draft"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, 33, "report", "final"); err != nil {
		t.Fatalf("second write with the same token: %v", err)
	}
	v, ok, err := s.Read(ctx, "report")
	if err != nil || !ok || v.Value != "final" || v.Token != 33 {
		t.Fatalf("read: %v %v %v", v, ok, err)
	}
}
