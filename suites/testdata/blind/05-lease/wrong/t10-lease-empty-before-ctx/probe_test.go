package lease

import (
	"context"
	"errors"
	"testing"
)

// A Lease with a done ctx on an empty queue says the ctx's error, not
// ErrNoTask.
func TestProbeLeaseCtxFirst(t *testing.T) {
	q, _ := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := q.Lease(ctx, "w1")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoTask) {
		t.Fatalf("Lease with a cancelled ctx on an empty queue: %v", err)
	}
}
