package backpressure

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeLatencyFromEnqueued(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4})
		ctx := context.Background()
		q.Submit(ctx, "a", "k", Task{})
		fakeclock.Advance(30 * time.Second)
		a, _ := q.Take(ctx)
		fakeclock.Advance(10 * time.Second)
		if err := q.Done(ctx, a.Ticket); err != nil {
			t.Fatal(err)
		}
		if s := q.Stats(); s.LastLatency != 40*time.Second || s.MaxLatency != 40*time.Second {
			t.Errorf("latencies %v/%v, want 40s (30 s waiting + 10 s in flight)", s.LastLatency, s.MaxLatency)
		}
	})
}
