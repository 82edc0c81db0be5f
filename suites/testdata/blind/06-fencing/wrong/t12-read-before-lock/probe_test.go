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

var errPKV = errors.New("probe kv down")

type pkv struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	onGet   func(key string)
	getFail bool
	putFail bool
}

func newPKV() *pkv { return &pkv{m: map[string]FencedValue{}} }

func (k *pkv) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	h := k.onGet
	fail := k.getFail
	v, ok := k.m[key]
	k.mu.Unlock()
	if fail {
		return FencedValue{}, false, errPKV
	}
	if h != nil {
		h(key) // after reading: the caller holds what it read
	}
	return v, ok, nil
}

func (k *pkv) Put(ctx context.Context, key string, v FencedValue) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.putFail {
		return errPKV
	}
	k.m[key] = v
	return nil
}

func TestProbe(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newPKV()
		gate := make(chan struct{})
		var mu sync.Mutex
		calls := 0
		kv.onGet = func(string) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				<-gate
			}
		}
		s := NewStore(kv)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _ = s.Write(ctx, 5, "k", "five") }()
		fakeclock.Wait()
		go func() { defer wg.Done(); _ = s.Write(ctx, 6, "k", "six") }()
		fakeclock.Wait()
		close(gate)
		wg.Wait()
		v, _, _ := s.Read(ctx, "k")
		if v.Token != 6 {
			t.Fatalf("key holds %v, want token 6", v)
		}
	})
}
