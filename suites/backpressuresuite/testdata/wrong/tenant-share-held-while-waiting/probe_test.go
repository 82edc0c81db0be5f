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

// A Submit waiting for a place holds no place, in the tenant's share
// neither: another Submit of its tenant, refused after MaxWait while the
// queue is full, is refused for the queue, not the tenant (R4, R7).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := New(Options{Capacity: 3, TenantLimit: 1, MaxWait: time.Minute})
		for _, ten := range []string{"b", "c", "d"} {
			must(t, q.Submit(ctx, ten, ten, Task{}))
		}
		w1 := submitAsync(ctx, q, "a", "a1")
		synctest.Wait()
		w2 := submitAsync(ctx, q, "a", "a2")
		r1, r2 := <-w1, <-w2
		for _, r := range []result{r1, r2} {
			if !errors.Is(r.err, ErrQueueFull) || errors.Is(r.err, ErrTenantFull) {
				t.Errorf("a's Submit: %v; want ErrQueueFull (tenant a has nothing waiting)", r.err)
			}
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
