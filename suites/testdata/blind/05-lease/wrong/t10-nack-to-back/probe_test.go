package lease

import (
	"context"
	"testing"
)

// A released task keeps the place its Enqueue gave it.
func TestProbeReleasedKeepsPlace(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	q.Enqueue(ctx, Task{ID: "a"})
	q.Enqueue(ctx, Task{ID: "b"})
	l, _ := q.Lease(ctx, "w1")
	if l.Task.ID != "a" {
		t.Fatalf("first lease %v", l)
	}
	if err := q.Nack(ctx, l.Token, 0); err != nil {
		t.Fatal(err)
	}
	l2, err := q.Lease(ctx, "w2")
	if err != nil || l2.Task.ID != "a" || l2.Attempt != 2 {
		t.Fatalf("after release got %v %v, want a (attempt 2)", l2, err)
	}
}
