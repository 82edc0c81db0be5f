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

// MaxWait counts from the Submit's own start: a wakeup that finds no room
// for the waiter does not start its wait again (R4).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := New(Options{Capacity: 4, MaxWait: 10 * time.Second}) // share 1
		must(t, q.Submit(ctx, "b", "b1", Task{}))
		must(t, q.Submit(ctx, "a", "a1", Task{}))
		w := submitAsync(ctx, q, "a", "a2") // waits: a's share is full
		time.Sleep(5 * time.Second)
		if _, err := q.Take(ctx); err != nil { // b1: a place, not a's
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		r := <-w
		if !errors.Is(r.err, ErrTenantFull) || r.at != 10*time.Second {
			t.Fatalf("waiter returned %v after %v, want ErrTenantFull after exactly 10s", r.err, r.at)
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
