package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// MaxDeliveries 3: the third delivery's Nack parks the task at that instant.
func TestProbeThirdNackDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 3, VisibilityTimeout: time.Minute})
		q.Enqueue(ctx, Task{ID: "t1"})
		for i := 1; i <= 3; i++ {
			m, err := q.Receive(ctx, "c")
			if err != nil {
				t.Fatalf("delivery %d: %v", i, err)
			}
			if err := q.Nack(ctx, m.Receipt, errors.New("parse error")); err != nil {
				t.Fatal(err)
			}
		}
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].Deliveries != 3 || dl[0].LastError != "parse error" {
			t.Fatalf("after third Nack DLQ = %v", dl)
		}
		if m, err := q.Receive(ctx, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth delivery: %v %v", m, err)
		}
	})
}
