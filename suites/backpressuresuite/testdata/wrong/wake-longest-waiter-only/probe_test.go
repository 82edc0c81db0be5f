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

// A freed place admits a waiter that it has room for, even when another
// waiter, waiting longer, still finds no room in its tenant's share (R4, R7).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := New(Options{Capacity: 3, TenantLimit: 2, MaxWait: time.Hour})
		must(t, q.Submit(ctx, "b", "b1", Task{}))
		must(t, q.Submit(ctx, "a", "a1", Task{}))
		must(t, q.Submit(ctx, "a", "a2", Task{}))
		wa := submitAsync(ctx, q, "a", "a3") // waits for a's share and a place
		synctest.Wait()
		wc := submitAsync(ctx, q, "c", "c1") // waits for a place
		synctest.Wait()
		if _, err := q.Take(ctx); err != nil { // b1: a place for c, none for a
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case r := <-wc:
			if r.err != nil || r.at != 0 {
				t.Fatalf("c: %v after %v; want admitted at once", r.err, r.at)
			}
		default:
			t.Error("c still waits though a place is free")
			time.Sleep(2 * time.Hour)
			<-wc
		}
		select {
		case r := <-wa:
			t.Fatalf("a returned %v, but its share is still full", r.err)
		default:
		}
		time.Sleep(2 * time.Hour)
		if r := <-wa; !errors.Is(r.err, ErrQueueFull) {
			t.Fatalf("a after MaxWait: %v", r.err)
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
