package lease

import (
	"context"
	"errors"
	"testing"
)

// An ID queued again after its Ack is a new task: attempt 1, with a token
// never issued before; the old token acknowledges nothing.
func TestProbeRequeuedTaskGetsNewToken(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	q.Enqueue(ctx, Task{ID: "a"})
	l1, _ := q.Lease(ctx, "w1")
	if err := q.Ack(ctx, l1.Token); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	l2, err := q.Lease(ctx, "w2")
	if err != nil || l2.Attempt != 1 {
		t.Fatalf("%v %v", l2, err)
	}
	if l2.Token == l1.Token {
		t.Fatalf("token %q issued twice", l1.Token)
	}
	if err := q.Ack(ctx, l1.Token); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("old token acknowledged the new task: %v", err)
	}
}
