package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeTieGoesToContext(t *testing.T) {
	for i := 0; i < 20; i++ {
		fakeclock.Run(t, func(t *testing.T) {
			q := New(Options{Capacity: 1, MaxWait: 10 * time.Second})
			q.Submit(context.Background(), "a", "k1", Task{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res := make(chan error, 1)
			go func() { res <- q.Submit(ctx, "b", "k2", Task{}) }()
			fakeclock.Advance(10 * time.Second)
			err := <-res
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrQueueFull) {
				t.Errorf("round %d: MaxWait and deadline on the same instant: %v, want DeadlineExceeded", i, err)
			}
			if r := q.Stats().Rejected; r != 0 {
				t.Errorf("round %d: Rejected = %d, want 0", i, r)
			}
		})
	}
}
