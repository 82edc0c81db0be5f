package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R7): Nack "ends the current lease ... the token is dead from then
// on". During a release's delay, the released token must not Ack or Extend.
func TestProbeReleasedTokenIsDeadDuringTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: time.Minute})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		if err := q.Nack(ctx, l.Token, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if _, err := q.Extend(ctx, l.Token, time.Hour); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Extend with the released token during the delay: %v, want ErrLeaseLost", err)
		}
		if err := q.Ack(ctx, l.Token); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Ack with the released token during the delay: %v, want ErrLeaseLost", err)
		}
		time.Sleep(10 * time.Minute)
		if l2, err := q.Lease(ctx, "w2"); err != nil || l2.Attempt != 2 {
			t.Errorf("after the delay: %+v, %v; want attempt 2 (the task must still be there)", l2, err)
		}
	})
}
