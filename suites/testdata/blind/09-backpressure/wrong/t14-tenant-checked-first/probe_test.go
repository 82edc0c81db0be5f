package backpressure

import (
	"context"
	"errors"
	"testing"
)

func TestProbeFullQueueIsQueueFull(t *testing.T) {
	q := New(Options{Capacity: 2, TenantLimit: 2})
	ctx := context.Background()
	q.Submit(ctx, "a", "k1", Task{})
	q.Submit(ctx, "a", "k2", Task{})
	err := q.Submit(ctx, "a", "k3", Task{})
	if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
		t.Errorf("full queue, tenant full too: got %v, want ErrQueueFull itself", err)
	}
}
