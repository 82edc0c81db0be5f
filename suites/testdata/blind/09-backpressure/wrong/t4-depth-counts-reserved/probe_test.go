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

// R8: a place reserved by a Submit still claiming its key is not a job waiting.
func TestProbeReservationIsNotDepth(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{})}
		q := New(Options{Capacity: 4, Claimer: c})
		ch := submitAsync(q, context.Background(), "t", "a")
		fakeclock.Wait()
		if s := q.Stats(); s.Depth != 0 {
			t.Fatalf("Depth = %d while the only Submit is claiming, want 0", s.Depth)
		}
		close(c.hold)
		fakeclock.Wait()
		<-ch
		if s := q.Stats(); s.Depth != 1 {
			t.Fatalf("Depth = %d after the claim, want 1", s.Depth)
		}
	})
}
