package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A delivery whose lease ended (a crash) still counts: when the second
// delivery fails, the backoff is BaseBackoff*2^(2-1).
func TestProbeBackoffFollowsTheDelivery(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return now }, VisibilityTimeout: 10 * time.Second, BaseBackoff: time.Second, MaxBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}); err != nil {
		t.Fatal(err)
	}
	l1, err := m.Lease(ctx, "crasher")
	if err != nil {
		t.Fatal(err)
	}
	now = l1.Expires // the worker crashed; its lease ends
	l2, err := m.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if l2.Delivery != 2 {
		t.Fatalf("second lease %v, want delivery 2", l2)
	}
	if err := m.Fail(ctx, l2, errors.New("busy")); err != nil {
		t.Fatal(err)
	}
	in, err := m.Inspect(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(2 * time.Second); in.State != "queued" || !in.Until.Equal(want) {
		t.Fatalf("after Fail of delivery 2: %v until %v, want queued until %v (base 1s * 2^(2-1))", in, in.Until, want)
	}
}
