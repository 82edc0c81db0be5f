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
		gate1, gate2 := make(chan struct{}), make(chan struct{})
		var mu sync.Mutex
		calls := 0
		kv.onGet = func(string) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				<-gate1
			} else if n == 2 {
				<-gate2
			}
		}
		s := NewStore(kv)
		var wg sync.WaitGroup
		write := func(tok FencingToken) {
			wg.Add(1)
			go func() { defer wg.Done(); _ = s.Write(ctx, tok, "k", "v") }()
		}
		write(5)
		fakeclock.Wait()
		write(5)
		fakeclock.Wait()
		close(gate1)
		fakeclock.Wait()
		write(6)
		fakeclock.Wait()
		close(gate2)
		wg.Wait()
		v, _, _ := s.Read(ctx, "k")
		if v.Token != 6 {
			t.Fatalf("key ends at token %d, want 6", v.Token)
		}
	})
}
