package backpressure

import (
	"context"
	"errors"
	"testing"
)

type failClaimer struct{}

var errDown = errors.New("claim store down")

func (failClaimer) Claim(ctx context.Context, tenant, key string) error { return errDown }

func TestProbeFailedClaimGivesTenantShareBack(t *testing.T) {
	cl := &switchClaimer{fail: true}
	q := New(Options{Capacity: 4, TenantLimit: 1, Claimer: cl})
	ctx := context.Background()
	if err := q.Submit(ctx, "a", "k1", Task{}); !errors.Is(err, errDown) {
		t.Fatalf("failed claim: %v, want the claimer's error", err)
	}
	cl.fail = false
	if err := q.Submit(ctx, "a", "k1", Task{}); err != nil {
		t.Fatalf("after a failed claim the tenant's share is free again: %v", err)
	}
	if s := q.Stats(); s.Depth != 1 || s.Rejected != 0 {
		t.Fatalf("stats %v", s)
	}
}

type switchClaimer struct{ fail bool }

func (c *switchClaimer) Claim(ctx context.Context, tenant, key string) error {
	if c.fail {
		return errDown
	}
	return nil
}

var _ = failClaimer{}
