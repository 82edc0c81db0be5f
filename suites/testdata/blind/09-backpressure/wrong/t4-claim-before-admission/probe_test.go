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

// R5: admission comes before the claim: a refused job leaves its key unclaimed.
func TestProbeRefusedJobClaimsNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{}
		q := New(Options{Capacity: 1, Claimer: c})
		ctx := context.Background()
		if err := q.Submit(ctx, "t", "a", tk("a")); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := q.Submit(ctx, "t", "b", tk("b")); !errors.Is(err, ErrQueueFull) {
				t.Fatalf("Submit to a full queue = %v, want ErrQueueFull", err)
			}
		}
		if n := c.count(); n != 1 {
			t.Fatalf("claim store saw %d claims (%v), want 1: refused jobs must claim nothing", n, c.keys)
		}
	})
}
