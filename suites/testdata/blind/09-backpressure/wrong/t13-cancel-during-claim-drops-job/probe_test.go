package backpressure

import (
	"context"
	"testing"
)

type cancelDuringClaim struct{ cancel context.CancelFunc }

func (c cancelDuringClaim) Claim(ctx context.Context, tenant, key string) error {
	c.cancel()
	return nil
}

func TestProbeCancelledDuringClaimStillQueued(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := New(Options{Capacity: 4, Claimer: cancelDuringClaim{cancel}})
	if err := q.Submit(ctx, "a", "k", Task{}); err != nil {
		t.Fatalf("claim succeeded, ctx cancelled during it: %v, want nil", err)
	}
	a, err := q.Take(context.Background())
	if err != nil {
		t.Fatalf("claimed job not queued: %v", err)
	}
	if a.Key != "k" {
		t.Fatalf("took %v", a)
	}
}
