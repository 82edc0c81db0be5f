package lease

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A 30 s renewal at t=20s ends at t=50s, not 30 s after the old expiry.
func TestProbeRenewalCountsFromNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		start := time.Now()
		l, err := q.Lease(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		nl, err := q.Extend(ctx, l.Token, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := nl.Expires.Sub(start); got != 50*time.Second {
			t.Fatalf("renewed lease ends at t=%v, want t=50s", got)
		}
	})
}
