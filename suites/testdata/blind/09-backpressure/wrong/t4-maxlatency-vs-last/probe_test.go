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

// R10: MaxLatency is the longest since New, kept whatever the order of the Dones.
func TestProbeMaxLatencyIsTheLongestEver(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{})
		ctx := context.Background()
		for _, d := range []time.Duration{5 * time.Second, time.Second, 3 * time.Second} {
			_ = q.Submit(ctx, "t", fmt.Sprint(d), tk("x"))
			a, _ := q.Take(ctx)
			fakeclock.Advance(d)
			if err := q.Done(ctx, a.Ticket); err != nil {
				t.Fatal(err)
			}
		}
		if s := q.Stats(); s.MaxLatency != 5*time.Second || s.LastLatency != 3*time.Second {
			t.Fatalf("max %v last %v after latencies 5s,1s,3s; want 5s, 3s", s.MaxLatency, s.LastLatency)
		}
	})
}
