package deadletter

import (
	"context"
	"errors"
	"testing"
)

// A nacked task keeps its place: it was enqueued before the others.
func TestProbeNackedKeepsPlace(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	q.Enqueue(ctx, Task{ID: "a"})
	q.Enqueue(ctx, Task{ID: "b"})
	m, _ := q.Receive(ctx, "c1")
	if m.Task.ID != "a" {
		t.Fatalf("first delivery %v", m)
	}
	if err := q.Nack(ctx, m.Receipt, errors.New("x")); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c2")
	if err != nil || m.Task.ID != "a" || m.Deliveries != 2 {
		t.Fatalf("after Nack got %v %v, want a (delivery 2)", m, err)
	}
}
