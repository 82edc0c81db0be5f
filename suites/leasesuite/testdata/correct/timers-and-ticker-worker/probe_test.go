package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The timer-backed queue is still exact at the instant (Lease compares the
// clock too), and the ticker worker keeps an hour of work alive on a 30 s
// lease and acknowledges it.
func TestProbeTimersAndTickerWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		time.Sleep(time.Until(l.Expires))
		if _, err := q.Lease(ctx, "w2"); err != nil {
			t.Fatalf("at Expires: %v", err)
		}
		q2, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q2.Enqueue(ctx, Task{ID: "long"})
		done := make(chan struct{})
		w := NewWorker(q2, WorkerOptions{Name: "w"}, func(ctx context.Context, l Lease) error {
			defer close(done)
			select {
			case <-time.After(time.Hour):
				return nil
			case <-ctx.Done():
				t.Error("handler cancelled")
				return ctx.Err()
			}
		})
		rctx, cancel := context.WithCancel(ctx)
		ran := make(chan error)
		go func() { ran <- w.Run(rctx) }()
		<-done
		synctest.Wait()
		cancel()
		<-ran
		if _, err := q2.Lease(ctx, "x"); !errors.Is(err, ErrNoTask) {
			t.Errorf("after the hour of work: %v, want the task acknowledged", err)
		}
	})
}
