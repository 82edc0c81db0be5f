package backpressure

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeLatencyFromEnqueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 4})
		ctx := context.Background()
		if err := q.Submit(ctx, "a", "k", Task{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(7 * time.Second)
		a, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := q.Done(ctx, a.Ticket); err != nil {
			t.Fatal(err)
		}
		s := q.Stats()
		if s.LastLatency != 9*time.Second || s.MaxLatency != 9*time.Second {
			t.Fatalf("latencies %v / %v, want 9s (from Enqueued, waiting included)", s.LastLatency, s.MaxLatency)
		}
	})
}
