package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// Promise (R6, R11): a Write is accepted when its token is at least "the
// highest token key has accepted"; a failed Put accepted nothing.
func TestProbeFailedPutDoesNotRaiseTheFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newKV()
		s := NewStore(kv)
		if err := s.Write(ctx, 34, "k", "B"); err != nil {
			t.Fatal(err)
		}
		kv.failPut = errors.New("timeout")
		if err := s.Write(ctx, 40, "k", "C"); err == nil {
			t.Fatal("failed Put reported as success")
		}
		if err := s.Write(ctx, 35, "k", "D"); err != nil {
			t.Errorf("token 35 on a key that accepted 34: %v, want accepted", err)
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
