package deadletter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = time.Second
var _ = fakeclock.Advance

func mustNew(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Dead letters are listed in the order they were dead-lettered: two last
// deliveries that expired at different instants, noticed by one List, in
// the order they expired (R9, R5).
func TestProbeExpiredLastDeliveriesListedInExpiryOrder(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := mustNew(t, Options{MaxDeliveries: 2, VisibilityTimeout: 10 * time.Second})
		for _, id := range []string{"A", "B"} {
			if err := q.Enqueue(ctx, Task{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		ma, err := q.Receive(ctx, "c1") // A, delivery 1, until t=10s
		if err != nil || ma.Task.ID != "A" {
			t.Fatalf("%v %v", ma, err)
		}
		mb, err := q.Receive(ctx, "c2") // B, delivery 1
		if err != nil || mb.Task.ID != "B" {
			t.Fatalf("%v %v", mb, err)
		}
		fakeclock.Advance(5 * time.Second)
		if err := q.Nack(ctx, mb.Receipt, errors.New("b failed")); err != nil {
			t.Fatal(err)
		}
		mb2, err := q.Receive(ctx, "c2") // B, delivery 2 (last), until t=15s
		if err != nil || mb2.Task.ID != "B" || mb2.Deliveries != 2 {
			t.Fatalf("%v %v", mb2, err)
		}
		fakeclock.Advance(5 * time.Second) // t=10s: A's first delivery ends
		ma2, err := q.Receive(ctx, "c1")   // A, delivery 2 (last), until t=20s
		if err != nil || ma2.Task.ID != "A" || ma2.Deliveries != 2 {
			t.Fatalf("%v %v", ma2, err)
		}
		fakeclock.Advance(20 * time.Second) // both crashed: B at 15s, A at 20s
		dl, err := q.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(dl) != 2 || dl[0].Task.ID != "B" || dl[1].Task.ID != "A" {
			t.Fatalf("List = %v; want B (expired t=15s) then A (expired t=20s)", dl)
		}
	})
}
