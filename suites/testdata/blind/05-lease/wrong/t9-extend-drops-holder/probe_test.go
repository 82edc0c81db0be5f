package lease

import (
	"context"
	"testing"
	"time"
)

// Extend returns the renewed lease: same token, holder and attempt (R5).
func TestProbeExtendReturnsHolder(t *testing.T) {
	ctx := context.Background()
	q, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	l, err := q.Lease(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	r, err := q.Extend(ctx, l.Token, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.Token != l.Token || r.Holder != "w1" || r.Attempt != 1 || r.Task != l.Task {
		t.Fatalf("Extend returned %+v; want same token, holder w1, attempt 1, task", r)
	}
}
