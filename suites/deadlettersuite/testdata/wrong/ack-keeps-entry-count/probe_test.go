package deadletter

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R2, R4): "An acknowledged task's ID may be enqueued again"; the
// new task's first delivery is number 1.
func TestProbeRequeuedTaskCountsFromOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		q.Ack(ctx, m.Receipt)
		if err := q.Enqueue(ctx, Task{ID: "a", Subject: "again"}); err != nil {
			t.Fatal(err)
		}
		m2, _ := q.Receive(ctx, "c2")
		if m2.Deliveries != 1 || m2.Task.Subject != "again" {
			t.Errorf("requeued task delivered as %v (%+v), want delivery 1 of the new task", m2, m2.Task)
		}
	})
}
