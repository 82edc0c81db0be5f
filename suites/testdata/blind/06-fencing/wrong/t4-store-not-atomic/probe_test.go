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

// R8: the check and the write are one atomic step. (Real goroutines: a goroutine waiting on a
// mutex is invisible to synctest. The 100 ms bound is the time the token-34 write is given to
// land while the token-33 write sits between its read and its write; a correct store makes it wait.)
func TestProbeCheckAndWriteOneStep(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	read33, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	kv.getHook = func(string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(read33)
			<-release
		}
	}
	done33 := make(chan error, 1)
	go func() { done33 <- s.Write(bg, 33, "r", "A's report") }()
	<-read33
	done34 := make(chan error, 1)
	go func() { done34 <- s.Write(bg, 34, "r", "B's report") }()
	got34 := false
	select {
	case <-done34:
		got34 = true
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done33
	if !got34 {
		<-done34
	}
	if v := kv.get("r"); v.Token != 34 || v.Value != "B's report" {
		t.Fatalf("key holds %v; want B's report with token 34", v)
	}
}
