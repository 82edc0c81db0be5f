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

// A queue with no room says ErrQueueFull, not ErrTenantFull: ErrTenantFull
// is for a queue that has room while the tenant's share is full (R7, R2).
func TestProbe(t *testing.T) {
	ctx := context.Background()
	q := New(Options{Capacity: 4, TenantLimit: 2})
	for _, ten := range []string{"a", "a", "b", "b"} {
		must(t, q.Submit(ctx, ten, ten+"-"+time.Now().String(), Task{}))
	}
	err := q.Submit(ctx, "a", "a-5", Task{})
	if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
		t.Fatalf("full queue, tenant a at its share too: got %v, want ErrQueueFull (the queue has no room), not ErrTenantFull", err)
	}
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
