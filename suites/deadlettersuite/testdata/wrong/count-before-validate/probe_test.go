package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R7): a task the validator rejects is dead-lettered "its count
// unchanged": never delivered, so 0 deliveries.
func TestProbeMalformedTaskIsNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{Validate: func(t Task) error {
			if t.DocumentID == "" {
				return errors.New("no document")
			}
			return nil
		}})
		q.Enqueue(ctx, Task{ID: "bad"})
		if _, err := q.Receive(ctx, "c1"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("Receive: %v", err)
		}
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].Deliveries != 0 {
			t.Errorf("dead letters %v, want bad with 0 deliveries", dl)
		}
	})
}
