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

// R8: Rejected counts the Submits that returned ErrQueueFull, not one that returned its context's error.
func TestProbeCancelledWaiterIsNotARejection(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Minute})
		if err := q.Submit(context.Background(), "t", "a", tk("a")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ch := submitAsync(q, ctx, "t", "b")
		fakeclock.Advance(time.Second)
		cancel()
		fakeclock.Wait()
		if err := <-ch; !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
			t.Fatalf("cancelled waiter = %v, want context.Canceled only", err)
		}
		if s := q.Stats(); s.Rejected != 0 {
			t.Fatalf("Rejected = %d after a cancelled wait, want 0", s.Rejected)
		}
	})
}
