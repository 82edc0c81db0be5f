package fencing

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
)

// Promise (R6, R7): "tokens up to 2^64-1 work like any other": after 2^64-1,
// a lower token is refused.
func TestProbeHugeTokenFences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := NewStore(newKV())
		if err := s.Write(ctx, math.MaxUint64, "k", "top"); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, 5, "k", "zombie"); !errors.Is(err, ErrStaleToken) {
			t.Errorf("token 5 after 2^64-1: %v, want ErrStaleToken", err)
		}
		if v, _, _ := s.Read(ctx, "k"); v.Value != "top" {
			t.Errorf("key holds %v", v)
		}
	})
}

// memKV is plain storage: Get and Put, each atomic on its own. failPut and
// failGet make the next call fail; onGet, when set, runs after each Get has
// read (outside the KV's lock), so a probe can hold a Write between its
// check and its write.
type memKV struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	failPut error
	onGet   func(key string)
}

func newKV() *memKV { return &memKV{m: map[string]FencedValue{}} }

func (k *memKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	v, ok := k.m[key]
	hook := k.onGet
	k.mu.Unlock()
	if hook != nil {
		hook(key)
	}
	return v, ok, nil
}

func (k *memKV) Put(ctx context.Context, key string, v FencedValue) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.failPut; err != nil {
		k.failPut = nil
		return err
	}
	k.m[key] = v
	return nil
}
