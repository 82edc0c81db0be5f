package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// Promise (R11): "Every KV error is returned, wrapped (errors.Is finds it)".
func TestProbePutErrorIsWrapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("disk full")
		kv := newKV()
		kv.failPut = boom
		err := NewStore(kv).Write(context.Background(), 7, "k", "v")
		if !errors.Is(err, boom) {
			t.Errorf("Write with a failing Put: %v, want an error wrapping %v", err, boom)
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
