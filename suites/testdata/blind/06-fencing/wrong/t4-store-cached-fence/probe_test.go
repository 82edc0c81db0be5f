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

// R11: a failed Put is an error and accepts nothing: a later write is judged against what the key holds.
func TestProbeFailedPutRaisesNoFence(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	_ = s.Write(bg, 34, "r", "B")
	boom := errors.New("disk full")
	kv.putErr = boom
	if err := s.Write(bg, 40, "r", "C"); !errors.Is(err, boom) {
		t.Fatalf("Write with a failing Put = %v, want it wrapped", err)
	}
	kv.putErr = nil
	if err := s.Write(bg, 35, "r", "D"); err != nil {
		t.Fatalf("Write 35 after the failed 40 = %v; the key only ever accepted 34", err)
	}
}
