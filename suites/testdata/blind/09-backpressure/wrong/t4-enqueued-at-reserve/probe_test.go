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

// R3: Enqueued is when the job entered the queue, once its claim succeeded.
func TestProbeEnqueuedAfterTheClaim(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{})}
		q := New(Options{Capacity: 4, Claimer: c})
		start := time.Now()
		ch := submitAsync(q, context.Background(), "t", "a")
		fakeclock.Advance(5 * time.Second)
		close(c.hold)
		fakeclock.Wait()
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
		a, err := q.Take(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Enqueued.Sub(start); got != 5*time.Second {
			t.Fatalf("Enqueued %v after Submit began, want 5s (after the slow claim)", got)
		}
	})
}
