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

// R9: OldestAge is the oldest *waiting* job's age, not a taken job's.
func TestProbeOldestAgeFollowsTake(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{})
		ctx := context.Background()
		_ = q.Submit(ctx, "t", "a", tk("a"))
		fakeclock.Advance(10 * time.Second)
		_ = q.Submit(ctx, "t", "b", tk("b"))
		fakeclock.Advance(20 * time.Second)
		if s := q.Stats(); s.OldestAge != 30*time.Second {
			t.Fatalf("OldestAge %v, want 30s", s.OldestAge)
		}
		_, _ = q.Take(ctx)
		if s := q.Stats(); s.OldestAge != 20*time.Second {
			t.Fatalf("after taking a: OldestAge %v, want 20s (b's)", s.OldestAge)
		}
		_, _ = q.Take(ctx)
		if s := q.Stats(); s.OldestAge != 0 {
			t.Fatalf("empty: OldestAge %v, want 0", s.OldestAge)
		}
	})
}
