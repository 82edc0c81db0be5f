package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R9): List returns dead letters "in the order they were
// dead-lettered": two crashed last deliveries noticed by one List, the one
// that expired first first, even when it was enqueued second.
func TestProbeExpiriesListedInTheOrderTheyHappened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 2, VisibilityTimeout: 30 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		q.Enqueue(ctx, Task{ID: "b"})
		q.Receive(ctx, "c1")          // a, delivery 1, ends at 30s
		mb, _ := q.Receive(ctx, "c2") // b, delivery 1
		time.Sleep(5 * time.Second)
		q.Nack(ctx, mb.Receipt, errors.New("boom"))
		q.Receive(ctx, "c3") // b, delivery 2 (its last), ends at 35s
		time.Sleep(25 * time.Second)
		q.Receive(ctx, "c4") // a, delivery 2 (its last), ends at 60s
		time.Sleep(time.Hour)
		dl, _ := q.List(ctx)
		if len(dl) != 2 || dl[0].Task.ID != "b" || dl[1].Task.ID != "a" {
			t.Errorf("dead letters %v, want b (expired at 35s) before a (at 60s)", dl)
		}
	})
}
