package deadletter

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// A validator that starts rejecting on a later delivery: validated before
// each delivery, so the second delivery never happens.
func TestProbeValidatedBeforeEachDelivery(t *testing.T) {
	ctx := context.Background()
	var reject atomic.Bool
	q, _ := New(Options{Validate: func(Task) error {
		if reject.Load() {
			return errors.New("schema v2 required")
		}
		return nil
	}})
	q.Enqueue(ctx, Task{ID: "a"})
	m, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	q.Nack(ctx, m.Receipt, errors.New("boom"))
	reject.Store(true)
	if m, err := q.Receive(ctx, "c2"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("delivered a task the validator rejects: %v %v", m, err)
	}
	dl, _ := q.List(ctx)
	if len(dl) != 1 || dl[0].Reason != ReasonMalformed || dl[0].Deliveries != 1 || dl[0].LastError != "schema v2 required" {
		t.Fatalf("DLQ = %v", dl)
	}
}
