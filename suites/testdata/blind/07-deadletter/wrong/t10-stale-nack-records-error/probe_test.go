package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A refused Nack (stale receipt) changes nothing, not even the last error.
func TestProbeStaleNackKeepsLastError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 2, VisibilityTimeout: time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		m1, _ := q.Receive(ctx, "c1")
		if err := q.Nack(ctx, m1.Receipt, errors.New("first")); err != nil {
			t.Fatal(err)
		}
		m2, err := q.Receive(ctx, "c2")
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Nack(ctx, m1.Receipt, errors.New("stale")); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("stale Nack: %v", err)
		}
		_ = m2
		time.Sleep(time.Second) // c2 crashed: its last delivery expires
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].LastError != "first" {
			t.Fatalf("DLQ = %v, want last error \"first\"", dl)
		}
	})
}
