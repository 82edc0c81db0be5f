package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R10): Redrive moves a dead letter "to the back of the queue".
func TestProbeRedriveGoesToTheBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 1})
		q.Enqueue(ctx, Task{ID: "a"})
		q.Enqueue(ctx, Task{ID: "b"})
		m, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m.Receipt, errors.New("boom")) // a is parked
		q.Enqueue(ctx, Task{ID: "c"})
		if err := q.Redrive(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 3 {
			m, _ := q.Receive(ctx, "c2")
			got = append(got, m.Task.ID)
		}
		if got[0] != "b" || got[1] != "c" || got[2] != "a" {
			t.Errorf("order after redrive %v, want [b c a]", got)
		}
	})
}
