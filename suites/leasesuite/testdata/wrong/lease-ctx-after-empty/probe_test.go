package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R10): "Every queue method checks its ctx first: with a done ctx
// it returns an error wrapping ctx.Err()", an empty queue included.
func TestProbeLeaseChecksCtxFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := q.Lease(ctx, "w"); !errors.Is(err, context.Canceled) {
			t.Errorf("Lease on an empty queue with a cancelled ctx: %v, want context.Canceled", err)
		}
	})
}
