package backpressure

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type slowClaimer struct{}

func (slowClaimer) Claim(ctx context.Context, tenant, key string) error {
	time.Sleep(5 * time.Second)
	return nil
}

func TestProbeEnqueuedAfterClaim(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4, Claimer: slowClaimer{}})
		ctx := context.Background()
		start := time.Now()
		if err := q.Submit(ctx, "a", "k", Task{}); err != nil {
			t.Fatal(err)
		}
		a, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := start.Add(5 * time.Second); !a.Enqueued.Equal(want) {
			t.Errorf("Enqueued %v, want %v (when the job entered the queue, after its 5 s claim)", a.Enqueued, want)
		}
	})
}
