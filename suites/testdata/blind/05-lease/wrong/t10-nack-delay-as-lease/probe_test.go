package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A released token is dead at once, also while the delay runs.
func TestProbeReleasedTokenDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: time.Hour})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		if err := q.Nack(ctx, l.Token, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Extend(ctx, l.Token, time.Minute); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Extend with a released token: %v", err)
		}
		if err := q.Ack(ctx, l.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Ack with a released token: %v", err)
		}
		time.Sleep(10 * time.Minute)
		if l2, err := q.Lease(ctx, "w2"); err != nil || l2.Attempt != 2 {
			t.Fatalf("after the delay: %v %v", l2, err)
		}
	})
}
