package backpressure

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeTieGoesToTheContext(t *testing.T) {
	for i := 0; i < 40; i++ {
		synctest.Test(t, func(t *testing.T) {
			q := New(Options{Capacity: 1, MaxWait: 10 * time.Second})
			if err := q.Submit(context.Background(), "a", "k1", Task{}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := q.Submit(ctx, "b", "k2", Task{})
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrQueueFull) {
				t.Fatalf("trial %d: MaxWait and the deadline on the same instant: %v, want context.DeadlineExceeded", i, err)
			}
			if s := q.Stats(); s.Rejected != 0 {
				t.Fatalf("trial %d: rejected %d, want 0", i, s.Rejected)
			}
		})
	}
}
