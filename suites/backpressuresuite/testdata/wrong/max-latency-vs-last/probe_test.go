package backpressure

// Probe written by an independent tester: it demonstrates this program's
// bug and passes on the reference solution.

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var _ = math.NaN
var _ = errors.Is
var _ = synctest.Test

// MaxLatency is the longest latency since New, not the longest of the
// last two (R10).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := New(Options{Capacity: 3})
		must(t, q.Submit(ctx, "a", "k1", Task{}))
		time.Sleep(20 * time.Second)
		must(t, q.Submit(ctx, "b", "k2", Task{}))
		must(t, q.Submit(ctx, "c", "k3", Task{}))
		var ts []Ticket
		for range 3 {
			a, err := q.Take(ctx)
			must(t, err)
			ts = append(ts, a.Ticket)
		}
		time.Sleep(10 * time.Second)
		must(t, q.Done(ctx, ts[0])) // 30s
		must(t, q.Done(ctx, ts[1])) // 10s
		time.Sleep(5 * time.Second)
		must(t, q.Done(ctx, ts[2])) // 15s
		if s := q.Stats(); s.MaxLatency != 30*time.Second || s.LastLatency != 15*time.Second {
			t.Fatalf("MaxLatency %v, LastLatency %v; want 30s and 15s", s.MaxLatency, s.LastLatency)
		}
	})
}

// gate is a Claimer whose Claim for a key in hold blocks until the key's
// channel yields an error (nil: claimed). Other keys are claimed at once.
type gate struct {
	mu    sync.Mutex
	hold  map[string]chan error
	delay time.Duration
	seen  []string
}

func (g *gate) Claim(ctx context.Context, tenant, key string) error {
	g.mu.Lock()
	g.seen = append(g.seen, key)
	ch := g.hold[key]
	g.mu.Unlock()
	if g.delay > 0 {
		time.Sleep(g.delay)
	}
	if ch != nil {
		return <-ch
	}
	return nil
}

type result struct {
	err error
	at  time.Duration
}

// submitAsync runs Submit in a goroutine of the bubble and reports its
// error and how long after start it returned.
func submitAsync(ctx context.Context, q *Queue, tenant, key string) <-chan result {
	out := make(chan result, 1)
	start := time.Now()
	go func() {
		err := q.Submit(ctx, tenant, key, Task{ID: key})
		out <- result{err, time.Since(start)}
	}()
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
