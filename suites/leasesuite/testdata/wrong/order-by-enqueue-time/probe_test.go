package lease

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
)

// Promise (R2): Lease returns "the visible task that was enqueued first",
// also when several were enqueued at the same instant of the clock.
func TestProbeOldestFirstAtOneInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		for round := range 20 {
			q, _ := New(Options{})
			for i := range 6 {
				q.Enqueue(ctx, Task{ID: fmt.Sprintf("t%d", i)})
			}
			for i := range 6 {
				l, _ := q.Lease(ctx, "w")
				if want := fmt.Sprintf("t%d", i); l.Task.ID != want {
					t.Fatalf("round %d: lease %d got %s, want %s", round, i, l.Task.ID, want)
				}
			}
		}
	})
}
