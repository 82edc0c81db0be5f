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

// R11: Recovery = backlog / (capacity - arrival) seconds, to within a nanosecond.
func TestProbeForecastSubSecond(t *testing.T) {
	f, err := ForecastBacklog(1, 0, 2)
	if err != nil || f.Recovery != 500*time.Millisecond {
		t.Fatalf("1 job at 2/s: %v, %v; want 500ms", f, err)
	}
	f, err = ForecastBacklog(12000, 80, 100)
	if err != nil || f.Recovery != 10*time.Minute || f.Growth != -20 {
		t.Fatalf("12000 at 80 vs 100: %v, %v", f, err)
	}
}
