package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Extend's d must be more than zero: Extend(0) is ErrInvalidDuration and
// changes nothing.
func TestProbeExtendZeroRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		if _, err := q.Extend(ctx, l.Token, 0); !errors.Is(err, ErrInvalidDuration) {
			t.Fatalf("Extend(0): %v, want ErrInvalidDuration", err)
		}
		if _, err := q.Lease(ctx, "w2"); !errors.Is(err, ErrNoTask) {
			t.Fatalf("refused Extend changed the lease: %v", err)
		}
		if err := q.Ack(ctx, l.Token); err != nil {
			t.Fatalf("lease should still hold: %v", err)
		}
	})
}
