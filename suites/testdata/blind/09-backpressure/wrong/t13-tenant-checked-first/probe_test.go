package backpressure

import (
	"context"
	"errors"
	"testing"
)

func TestProbeFullQueueIsQueueFullNotTenantFull(t *testing.T) {
	q := New(Options{Capacity: 4, TenantLimit: 2})
	ctx := context.Background()
	for i, tn := range []string{"a", "a", "b", "b"} {
		if err := q.Submit(ctx, tn, string(rune('0'+i)), Task{}); err != nil {
			t.Fatal(err)
		}
	}
	err := q.Submit(ctx, "a", "x", Task{})
	if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
		t.Fatalf("queue full and tenant full: %v, want ErrQueueFull itself, not ErrTenantFull", err)
	}
}
