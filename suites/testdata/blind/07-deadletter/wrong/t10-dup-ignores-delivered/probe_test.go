package deadletter

import (
	"context"
	"errors"
	"testing"
)

// A task being delivered is in the queue: Enqueue of its ID is refused.
func TestProbeDuplicateOfDeliveredRefused(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	q.Enqueue(ctx, Task{ID: "a"})
	m, _ := q.Receive(ctx, "c")
	if err := q.Enqueue(ctx, Task{ID: "a"}); !errors.Is(err, ErrDuplicateMessage) {
		t.Fatalf("Enqueue of a delivered task's ID: %v", err)
	}
	if err := q.Ack(ctx, m.Receipt); err != nil {
		t.Fatal(err)
	}
	if m2, err := q.Receive(ctx, "c"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("queue not empty after Ack: %v %v", m2, err)
	}
}
