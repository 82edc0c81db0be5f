package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Two last deliveries expiring five seconds apart, noticed by one List, are
// listed in the order they expired, whatever order they were enqueued in.
func TestProbeExpiredListedInExpiryOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 2, VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		q.Enqueue(ctx, Task{ID: "b"})
		a1, _ := q.Receive(ctx, "c")
		b1, _ := q.Receive(ctx, "c")
		if a1.Task.ID != "a" || b1.Task.ID != "b" {
			t.Fatalf("%v %v", a1, b1)
		}
		q.Nack(ctx, b1.Receipt, errors.New("x"))
		b2, _ := q.Receive(ctx, "c") // b's last delivery, expires at t=10s
		if b2.Task.ID != "b" || b2.Deliveries != 2 {
			t.Fatalf("%v", b2)
		}
		time.Sleep(5 * time.Second)
		q.Nack(ctx, a1.Receipt, errors.New("x"))
		a2, _ := q.Receive(ctx, "c") // a's last delivery, expires at t=15s
		if a2.Task.ID != "a" || a2.Deliveries != 2 {
			t.Fatalf("%v", a2)
		}
		time.Sleep(time.Minute)
		dl, _ := q.List(ctx)
		if len(dl) != 2 || dl[0].Task.ID != "b" || dl[1].Task.ID != "a" {
			t.Fatalf("DLQ = %v, want b (expired at 10s) then a (15s)", dl)
		}
	})
}
