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

// A job waiting is handed out though an older admission is still claiming
// its key: jobs come out in the order they were queued, and Take says
// ErrQueueEmpty only when no job waits (R3, R5).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{hold: map[string]chan error{"slow": make(chan error)}}
		q := New(Options{Capacity: 4, TenantLimit: 4, Claimer: g})
		ctx := context.Background()
		slow := submitAsync(ctx, q, "a", "slow")
		synctest.Wait()
		must(t, q.Submit(ctx, "a", "fast", Task{}))
		a, err := q.Take(ctx)
		g.hold["slow"] <- nil
		must(t, (<-slow).err)
		if err != nil || a.Key != "fast" {
			t.Fatalf("Take: %v, %v; want the fast job, which is waiting", a, err)
		}
		if a, err := q.Take(ctx); err != nil || a.Key != "slow" {
			t.Fatalf("Take: %v, %v; want the slow job", a, err)
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
