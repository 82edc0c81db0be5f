package lease

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R2): Lease gives "the visible task that was enqueued first". A
// released task was still enqueued before the tasks behind it.
func TestProbeReleasedTaskKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		q.Enqueue(ctx, Task{ID: "b"})
		l, _ := q.Lease(ctx, "w1")
		if err := q.Nack(ctx, l.Token, 0); err != nil {
			t.Fatal(err)
		}
		if l2, _ := q.Lease(ctx, "w2"); l2.Task.ID != "a" {
			t.Errorf("after releasing a: got %s, want a (enqueued first)", l2.Task.ID)
		}
	})
}
