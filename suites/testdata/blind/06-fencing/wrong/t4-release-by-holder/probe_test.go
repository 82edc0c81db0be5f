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

// R5: grants are told apart by token, not by holder name: a restarted worker cannot release its successor's grant.
func TestProbeReleaseByOldGrantUnderSameName(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		old, _ := l.Acquire(bg, "report", "worker-1")
		fakeclock.Advance(10 * time.Second)
		cur, err := l.Acquire(bg, "report", "worker-1") // the same name, after a restart
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(bg, old); !errors.Is(err, ErrLockLost) {
			t.Fatalf("Release of the expired grant = %v, want ErrLockLost", err)
		}
		if _, err := l.Acquire(bg, "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("after the stale release, Acquire = %v; want ErrLockHeld (grant %v still holds)", err, cur)
		}
	})
}
