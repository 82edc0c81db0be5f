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

// A failed claim gives its place back at once, and a Submit waiting for it
// is admitted at once (R6).
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{hold: map[string]chan error{"dup": make(chan error)}}
		q := New(Options{Capacity: 1, MaxWait: time.Hour, Claimer: g})
		ctx := context.Background()
		first := submitAsync(ctx, q, "a", "dup")
		synctest.Wait()
		waiter := submitAsync(ctx, q, "b", "k2")
		synctest.Wait()
		g.hold["dup"] <- errors.New("duplicate")
		if r := <-first; r.err == nil {
			t.Fatal("failed claim: Submit returned nil")
		}
		synctest.Wait()
		select {
		case r := <-waiter:
			if r.err != nil || r.at != 0 {
				t.Fatalf("waiter: %v after %v; want admitted at once", r.err, r.at)
			}
		default:
			t.Error("the waiter is still waiting after the failed claim gave its place back")
			time.Sleep(2 * time.Hour)
			<-waiter
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
