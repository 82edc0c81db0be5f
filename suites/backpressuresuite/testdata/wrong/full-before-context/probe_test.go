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

// A Submit with a done context returns the context's error and changes
// nothing, a full queue too (R13).
func TestProbe(t *testing.T) {
	q := New(Options{Capacity: 1})
	must(t, q.Submit(context.Background(), "a", "k1", Task{}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := q.Submit(ctx, "b", "k2", Task{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("done context on a full queue: %v, want context.Canceled", err)
	}
	if s := q.Stats(); s.Rejected != 0 {
		t.Fatalf("Rejected %d, want 0: a done context changes nothing", s.Rejected)
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
