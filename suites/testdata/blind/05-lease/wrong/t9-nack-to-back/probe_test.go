package lease

import (
	"context"
	"testing"
)

// A released task keeps the place its Enqueue gave it (R2).
func TestProbeNackKeepsPlace(t *testing.T) {
	ctx := context.Background()
	q, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := q.Enqueue(ctx, Task{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := q.Lease(ctx, "w1")
	if err != nil || l.Task.ID != "a" {
		t.Fatalf("first lease = %v, %v; want a", l, err)
	}
	if err := q.Nack(ctx, l.Token, 0); err != nil {
		t.Fatal(err)
	}
	l2, err := q.Lease(ctx, "w2")
	if err != nil || l2.Task.ID != "a" {
		t.Fatalf("lease after Nack = %v, %v; want a (released task keeps its place)", l2, err)
	}
}
