package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Redrive forgets the last error: a redriven task whose consumer then
// crashes is parked with no error text.
func TestProbeRedriveForgetsLastError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 1, VisibilityTimeout: time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c")
		if err := q.Nack(ctx, m.Receipt, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		if err := q.Redrive(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		m, err := q.Receive(ctx, "c")
		if err != nil || m.Deliveries != 1 {
			t.Fatalf("after redrive: %v %v", m, err)
		}
		time.Sleep(time.Second) // crashed
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].LastError != "" || dl[0].Deliveries != 1 {
			t.Fatalf("DLQ = %v, want no last error", dl)
		}
	})
}
