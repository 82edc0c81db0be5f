package lease

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Attempt counts deliveries, whether the previous one expired or was
// released: expiry, release, expiry gives attempts 1, 2, 3, 4.
func TestProbeAttemptCountsExpiries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		if l.Attempt != 1 {
			t.Fatalf("first attempt %d", l.Attempt)
		}
		time.Sleep(10 * time.Second) // w1 died
		l, _ = q.Lease(ctx, "w2")
		if l.Attempt != 2 {
			t.Fatalf("after an expiry: attempt %d, want 2", l.Attempt)
		}
		q.Nack(ctx, l.Token, 0)
		l, _ = q.Lease(ctx, "w3")
		if l.Attempt != 3 {
			t.Fatalf("after a release: attempt %d, want 3", l.Attempt)
		}
	})
}
