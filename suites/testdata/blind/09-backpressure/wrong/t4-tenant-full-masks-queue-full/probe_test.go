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

// R2: a job refused because no place of the queue is free gets ErrQueueFull itself,
// not ErrTenantFull, even when its tenant's share is full too.
func TestProbeQueueFullWinsOverTenantFull(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1})
		ctx := context.Background()
		_ = q.Submit(ctx, "a", "a1", tk("a1"))
		_ = q.Submit(ctx, "b", "b1", tk("b1"))
		err := q.Submit(ctx, "a", "a2", tk("a2"))
		if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
			t.Fatalf("Submit with queue and share both full = %v; want ErrQueueFull, not ErrTenantFull", err)
		}
	})
}
