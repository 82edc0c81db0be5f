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

// OldestAge is the age of the oldest waiting job, after the buffer wrapped
// around too (R9).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := New(Options{Capacity: 3, TenantLimit: 3})
		for _, k := range []string{"a", "b", "c"} {
			must(t, q.Submit(ctx, "t", k, Task{}))
			time.Sleep(time.Second)
		}
		if _, err := q.Take(ctx); err != nil { // a
			t.Fatal(err)
		}
		must(t, q.Submit(ctx, "t", "d", Task{})) // at 3s
		time.Sleep(time.Second)                  // 4s: b has waited 3s
		if s := q.Stats(); s.OldestAge != 3*time.Second {
			t.Fatalf("OldestAge %v, want 3s (b's)", s.OldestAge)
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
