package backpressure

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

type slowClaimer struct{ d time.Duration }

func (c slowClaimer) Claim(ctx context.Context, tenant, key string) error {
	time.Sleep(c.d)
	return nil
}

func TestProbeEnqueuedAfterClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 4, Claimer: slowClaimer{3 * time.Second}})
		ctx := context.Background()
		if err := q.Submit(ctx, "a", "k", Task{}); err != nil {
			t.Fatal(err)
		}
		queued := time.Now()
		time.Sleep(time.Second)
		if age := q.Stats().OldestAge; age != time.Second {
			t.Fatalf("oldest age %v, want 1s (from the instant the claim succeeded)", age)
		}
		a, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Enqueued.Equal(queued) {
			t.Fatalf("Enqueued %v, want %v", a.Enqueued, queued)
		}
	})
}
