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

// Depth is the jobs waiting; a place reserved by a Submit still claiming
// its key is not a waiting job (R8).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{hold: map[string]chan error{"slow": make(chan error)}}
		q := New(Options{Capacity: 2, Claimer: g})
		w := submitAsync(context.Background(), q, "a", "slow")
		synctest.Wait()
		if s := q.Stats(); s.Depth != 0 {
			t.Errorf("Depth %d during the claim, want 0", s.Depth)
		}
		g.hold["slow"] <- nil
		must(t, (<-w).err)
		if s := q.Stats(); s.Depth != 1 {
			t.Errorf("Depth %d after the claim, want 1", s.Depth)
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
