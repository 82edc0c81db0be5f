package backpressure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = math.MaxInt64
	_ = time.Second
	_ = fakeclock.Now
	_ sync.Mutex
)

// claims records every Claim; a key in fail fails; while hold is not nil,
// every Claim waits for it to be closed.
type claims struct {
	mu   sync.Mutex
	keys []string
	fail map[string]error
	hold chan struct{}
}

func (c *claims) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	c.keys = append(c.keys, tenant+"/"+key)
	err := c.fail[key]
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return err
}

func (c *claims) count() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.keys) }

func tk(id string) Task { return Task{ID: id, DocumentID: "doc-" + id} }

// submitAsync runs Submit in a goroutine; the channel gets its result.
func submitAsync(q *Queue, ctx context.Context, tenant, key string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Submit(ctx, tenant, key, tk(key)) }()
	return ch
}

// R4: a wakeup that finds no room for the waiter does not start its MaxWait again.
func TestProbeWakeupDoesNotRestartMaxWait(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 3, TenantLimit: 2, MaxWait: 10 * time.Second})
		ctx := context.Background()
		for _, s := range [][2]string{{"c", "c1"}, {"a", "a1"}, {"a", "a2"}} {
			if err := q.Submit(ctx, s[0], s[1], tk(s[1])); err != nil {
				t.Fatal(err)
			}
		}
		ch := submitAsync(q, ctx, "a", "a3")
		fakeclock.Advance(4 * time.Second)
		if a, err := q.Take(ctx); err != nil || a.Key != "c1" {
			t.Fatalf("Take = %v, %v", a, err)
		}
		fakeclock.Advance(6*time.Second - time.Nanosecond)
		select {
		case err := <-ch:
			t.Fatalf("waiter returned %v before its MaxWait", err)
		default:
		}
		fakeclock.Advance(time.Nanosecond)
		select {
		case err := <-ch:
			if !errors.Is(err, ErrQueueFull) {
				t.Fatalf("waiter = %v, want ErrQueueFull (its tenant share is full)", err)
			}
		default:
			t.Fatal("10 s after it started, the waiter is still waiting: the wakeup at 4 s restarted its MaxWait")
		}
	})
}
