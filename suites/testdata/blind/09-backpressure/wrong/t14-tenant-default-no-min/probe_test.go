package backpressure

import (
	"context"
	"errors"
	"testing"
)

func TestProbeDefaultShareAtLeastOne(t *testing.T) {
	q := New(Options{Capacity: 3})
	ctx := context.Background()
	if err := q.Submit(ctx, "a", "k1", Task{}); err != nil {
		t.Fatalf("first job of a tenant on Capacity 3: %v, want admitted (share max(3/4,1) = 1)", err)
	}
	if err := q.Submit(ctx, "a", "k2", Task{}); !errors.Is(err, ErrTenantFull) {
		t.Errorf("second job of the tenant: %v, want ErrTenantFull", err)
	}
}
