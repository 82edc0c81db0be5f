package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A job dead-lettered by a Lease (its last lease ended) takes no room.
func TestProbeLeaseDeadLetteringFreesRoom(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return now }, Capacity: 1, MaxDeliveries: 1})
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{{DocumentID: "d", Recipient: "a@x.io"}}
	if ok, err := m.Submit(ctx, Job{ID: "a", Account: "acc", Steps: steps}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	l, err := m.Lease(ctx, "crasher")
	if err != nil {
		t.Fatal(err)
	}
	now = l.Expires
	if _, err := m.Lease(ctx, "w"); !errors.Is(err, ErrNoJob) {
		t.Fatalf("Lease after the last lease ended: %v, want ErrNoJob", err)
	}
	if in, _ := m.Inspect(ctx, "a"); in.State != "dead" {
		t.Fatalf("a is %v, want dead", in)
	}
	if ok, err := m.Submit(ctx, Job{ID: "b", Account: "acc", Steps: steps}); !ok || err != nil {
		t.Fatalf("Submit(b) with the only unfinished job dead = %v, %v; want true, nil", ok, err)
	}
}
