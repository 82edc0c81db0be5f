package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The zombie scenario of the README on this design: A (token n) pauses past
// its lease, B is granted n+1 and writes, A's late write is refused.
func TestProbeZombieRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{TTL: 10 * time.Second})
		if c, ok := any(l).(interface{ Close() error }); ok {
			defer c.Close()
		}
		s := NewStore(&mapKV{m: map[string]FencedValue{}})
		a, _ := l.Acquire(ctx, "report", "A")
		time.Sleep(12 * time.Second)
		b, err := l.Acquire(ctx, "report", "B")
		if err != nil || b.Token <= a.Token {
			t.Fatalf("B: %v %v", b, err)
		}
		if err := s.Write(ctx, b.Token, "report", "B's"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(19 * time.Second)
		if err := s.Write(ctx, a.Token, "report", "A's"); !errors.Is(err, ErrStaleToken) {
			t.Errorf("zombie write: %v", err)
		}
	})
}

type mapKV struct {
	mu sync.Mutex
	m  map[string]FencedValue
}

func (k *mapKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok, ctx.Err()
}

func (k *mapKV) Put(ctx context.Context, key string, v FencedValue) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[key] = v
	return nil
}
