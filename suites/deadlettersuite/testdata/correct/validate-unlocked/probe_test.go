package deadletter

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A poison task crashes three consumers: parked after the third timeout,
// count 3, no error text (README's worked example), on this design.
func TestProbePoisonParkedAfterThreeCrashes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 3, VisibilityTimeout: 30 * time.Second, Validate: func(Task) error { return nil }})
		if c, ok := any(q).(interface{ Close() error }); ok {
			defer c.Close()
		}
		q.Enqueue(ctx, Task{ID: "poison"})
		for i := 1; i <= 3; i++ {
			m, err := q.Receive(ctx, "c")
			if err != nil || m.Deliveries != i {
				t.Fatalf("delivery %d: %v %v", i, m, err)
			}
			time.Sleep(30 * time.Second)
		}
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].Deliveries != 3 || dl[0].LastError != "" || dl[0].Reason != ReasonMaxDeliveries {
			t.Errorf("dead letters %v", dl)
		}
	})
}
