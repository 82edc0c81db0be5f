package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R3, R5): Receive delivers "the visible task enqueued (or
// redriven) earliest"; a nacked task is visible again at once and was still
// enqueued first.
func TestProbeNackedTaskKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		q.Enqueue(ctx, Task{ID: "b"})
		m, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m.Receipt, errors.New("boom"))
		if m2, _ := q.Receive(ctx, "c2"); m2.Task.ID != "a" {
			t.Errorf("after a's Nack got %s, want a (enqueued earliest)", m2.Task.ID)
		}
	})
}
