package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Three consumers crash on one task (max 3): after the third timeout it is
// dead-lettered with count 3, and there is never a fourth delivery.
func TestProbeCrashesAreCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, err := New(Options{MaxDeliveries: 3, VisibilityTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, Task{ID: "poison"}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			m, err := q.Receive(ctx, "c")
			if err != nil {
				t.Fatalf("delivery %d: %v", i, err)
			}
			if m.Deliveries != i {
				t.Fatalf("delivery %d has Deliveries %d", i, m.Deliveries)
			}
			time.Sleep(10 * time.Second) // the consumer crashed
		}
		if m, err := q.Receive(ctx, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth delivery: %v %v", m, err)
		}
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].Deliveries != 3 || dl[0].Reason != ReasonMaxDeliveries || dl[0].LastError != "" {
			t.Fatalf("DLQ = %v", dl)
		}
	})
}
