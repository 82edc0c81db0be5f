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

// A Nack with a receipt that is not the current delivery's fails with
// ErrDeliveryLost and changes nothing, the last error included (R8).
func TestProbeStaleNackKeepsLastError(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := mustNew(t, Options{MaxDeliveries: 2, VisibilityTimeout: 10 * time.Second})
		if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		m1, err := q.Receive(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Nack(ctx, m1.Receipt, errors.New("first failure")); err != nil {
			t.Fatal(err)
		}
		m2, err := q.Receive(ctx, "c2")
		if err != nil || m2.Deliveries != 2 {
			t.Fatalf("%v %v", m2, err)
		}
		if err := q.Nack(ctx, m1.Receipt, errors.New("stale report")); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("stale Nack = %v; want ErrDeliveryLost", err)
		}
		fakeclock.Advance(10 * time.Second) // c2 crashed on the last delivery
		dl, err := q.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(dl) != 1 || dl[0].Deliveries != 2 || dl[0].LastError != "first failure" {
			t.Fatalf("List = %v; want a after 2 deliveries, LastError \"first failure\" (the refused Nack changes nothing)", dl)
		}
	})
}
