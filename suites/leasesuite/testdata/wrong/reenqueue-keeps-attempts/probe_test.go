package lease

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R1, R4): "Once acknowledged, an ID may be queued again"; Attempt
// counts the task's deliveries, so a task queued anew starts at 1.
func TestProbeRequeuedTaskStartsAtAttemptOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		q.Ack(ctx, l.Token)
		if err := q.Enqueue(ctx, Task{ID: "a", Subject: "v2"}); err != nil {
			t.Fatal(err)
		}
		l2, _ := q.Lease(ctx, "w2")
		if l2.Attempt != 1 || l2.Task.Subject != "v2" {
			t.Errorf("requeued task delivered as %+v, want attempt 1 of v2", l2)
		}
	})
}
