package lease

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type countingLease struct {
	*Queue
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *countingLease) Lease(ctx context.Context, h string) (Lease, error) {
	if c.n.Add(1) > 500 {
		c.cancel() // spinning: stop the worker so that the probe can report
	}
	return c.Queue.Lease(ctx, h)
}

// Promise (NewWorker doc): "opts.PollInterval is how long it waits after the
// queue had no visible task (zero or less means one second)".
func TestProbeNegativePollIntervalMeansOneSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		ctx, cancel := context.WithCancel(context.Background())
		c := &countingLease{Queue: q, cancel: cancel}
		w := NewWorker(c, WorkerOptions{Name: "w", PollInterval: -5 * time.Second}, func(context.Context, Lease) error { return nil })
		ran := make(chan error, 1)
		go func() { ran <- w.Run(ctx) }()
		time.Sleep(10*time.Second + time.Millisecond)
		cancel()
		<-ran
		if n := c.n.Load(); n > 11 {
			t.Errorf("%d Lease calls in 10s on an empty queue with PollInterval -5s, want at most 11 (one a second)", n)
		}
	})
}
