package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeCancelledWaiterNotRejected(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Hour})
		q.Submit(context.Background(), "a", "k1", Task{})
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() { res <- q.Submit(ctx, "b", "k2", Task{}) }()
		fakeclock.Advance(time.Second)
		cancel()
		fakeclock.Wait()
		err := <-res
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
			t.Errorf("cancelled waiter: %v, want context.Canceled", err)
		}
		if r := q.Stats().Rejected; r != 0 {
			t.Errorf("Rejected = %d, want 0: a Submit that returned its context's error is not a rejection", r)
		}
	})
}
