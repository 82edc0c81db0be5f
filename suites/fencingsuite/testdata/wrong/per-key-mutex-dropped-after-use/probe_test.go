package fencing

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Promise (R8): "a lower token never lands on top of a higher one, even when
// the two writes overlap". Three writes to one key: A (10) is in its Get
// while B (33) waits; then B is held between its check and its write while
// C (34) arrives.
func TestProbeThreeOverlappingWrites(t *testing.T) {
	{
		ctx := context.Background()
		kv := newKV()
		s := NewStore(kv)
		holdA, holdB := make(chan struct{}), make(chan struct{})
		inGet := make(chan int, 3)
		var gmu sync.Mutex
		gets := 0
		kv.onGet = func(string) {
			gmu.Lock()
			gets++
			n := gets
			gmu.Unlock()
			inGet <- n
			switch n {
			case 1:
				<-holdA
			case 2:
				<-holdB
			}
		}
		// A real pause: a goroutine waiting on a mutex is not "durably
		// blocked" for synctest, so its Wait cannot tell when B is queued.
		settle := func() { time.Sleep(20 * time.Millisecond) }
		var wg sync.WaitGroup
		wg.Go(func() { s.Write(ctx, 10, "k", "A") })
		<-inGet // A in its Get
		wg.Go(func() { s.Write(ctx, 33, "k", "B") })
		settle() // B waiting for A
		close(holdA)
		<-inGet // A done, B between its Get and its Put
		var c error
		wg.Go(func() { c = s.Write(ctx, 34, "k", "C") })
		settle() // C waiting for B, or (wrongly) done
		close(holdB)
		wg.Wait()
		v, _, _ := s.Read(ctx, "k")
		if c != nil || v.Token != 34 {
			t.Errorf("C's write of 34: %v; the key ended with %v, want token 34", c, v)
		}
	}
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
