package backpressure

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeCancelledWaiterNotRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Minute})
		if err := q.Submit(context.Background(), "a", "k1", Task{}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() { res <- q.Submit(ctx, "b", "k2", Task{}) }()
		time.Sleep(10 * time.Second)
		cancel()
		err := <-res
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
			t.Fatalf("cancelled waiter: %v, want context.Canceled and not ErrQueueFull", err)
		}
		if s := q.Stats(); s.Rejected != 0 || s.Depth != 1 {
			t.Fatalf("stats %v, want rejected 0, depth 1", s)
		}
	})
}
