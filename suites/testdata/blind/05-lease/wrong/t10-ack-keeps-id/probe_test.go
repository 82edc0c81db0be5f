package lease

import (
	"context"
	"testing"
)

// Once acknowledged, an ID may be queued again, as a new task.
func TestProbeAckedIDFreeAgain(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	q.Enqueue(ctx, Task{ID: "a"})
	l, _ := q.Lease(ctx, "w1")
	if err := q.Ack(ctx, l.Token); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a", Subject: "again"}); err != nil {
		t.Fatalf("Enqueue of an acknowledged ID: %v", err)
	}
	l2, err := q.Lease(ctx, "w1")
	if err != nil || l2.Attempt != 1 || l2.Task.Subject != "again" {
		t.Fatalf("%v %v", l2, err)
	}
}
