package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Worker takes tasks from a LeaseQueue and runs a Handler on each, at most
// Capacity at a time, keeping each task's lease alive while its handler
// works. Build it with NewWorker; Run runs it.
//
// This worker counts its busy slots in the Run loop itself: every task
// goroutine reports on the free channel when it has settled its task, and
// the loop leases only while fewer than Capacity are busy. Renewals come
// from a ticker at half the lease's length.
type Worker struct {
	queue    LeaseQueue
	name     string
	capacity int
	poll     time.Duration
	backoff  func(attempt int) time.Duration
	handle   Handler
}

// NewWorker returns a worker named opts.Name that takes tasks from q and
// runs handle on each.
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	return &Worker{queue: q, name: opts.Name, capacity: max(opts.Capacity, 1), poll: cmpDur(opts.PollInterval, time.Second), backoff: opts.Backoff, handle: handle}
}

func cmpDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Run leases tasks and works on them until ctx is done or the queue fails.
func (w *Worker) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	free := make(chan struct{}, w.capacity)
	busy := 0
	var wg sync.WaitGroup
loop:
	for ctx.Err() == nil {
		for busy == w.capacity {
			select {
			case <-free:
				busy--
			case <-ctx.Done():
				break loop
			}
		}
		l, err := w.queue.Lease(ctx, w.name)
		switch {
		case err == nil:
			busy++
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w.serve(ctx, l); err != nil {
					cancel(err)
				}
				free <- struct{}{}
			}()
		case errors.Is(err, ErrNoTask):
			t := time.NewTimer(w.poll)
		wait:
			for {
				select {
				case <-t.C:
					break wait
				case <-free:
					busy--
				case <-ctx.Done():
					t.Stop()
					break wait
				}
			}
		default:
			if ctx.Err() == nil {
				cancel(fmt.Errorf("worker %s: lease: %w", w.name, err))
			}
		}
	}
	wg.Wait()
	return fmt.Errorf("worker %s: stopped: %w", w.name, context.Cause(ctx))
}

// serve runs the handler on l, renews the lease on a ticker while it runs,
// and settles the task. It returns an error only when the queue failed.
func (w *Worker) serve(ctx context.Context, l Lease) error {
	length := time.Until(l.Expires)
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	res := make(chan error, 1)
	go func(l Lease) { res <- w.handle(hctx, l) }(l)
	tick := time.NewTicker(max(length/2, 1))
	defer tick.Stop()
	for {
		select {
		case err := <-res:
			return w.settle(ctx, l, err)
		case <-tick.C:
			rctx, rcancel := context.WithDeadline(ctx, l.Expires)
			renewed, err := w.queue.Extend(rctx, l.Token, length)
			late := rctx.Err() != nil && ctx.Err() == nil
			rcancel()
			if err == nil {
				l = renewed
				continue
			}
			hcancel()
			handled := <-res
			switch {
			case ctx.Err() != nil:
				return w.settle(ctx, l, handled)
			case errors.Is(err, ErrLeaseLost), late:
				return nil
			default:
				return fmt.Errorf("worker %s: extend %s: %w", w.name, l, err)
			}
		}
	}
}

// settle acks a success and releases a failure, with a ctx that survives
// the worker's shutdown.
func (w *Worker) settle(ctx context.Context, l Lease, handled error) error {
	ctx = context.WithoutCancel(ctx)
	var err error
	if handled == nil {
		err = w.queue.Ack(ctx, l.Token)
	} else {
		var delay time.Duration // R15: the Backoff for this attempt (added by the kit when R15 changed)
		if w.backoff != nil {
			delay = w.backoff(l.Attempt)
		}
		err = w.queue.Nack(ctx, l.Token, delay)
	}
	if err == nil || errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return fmt.Errorf("worker %s: settle %s: %w", w.name, l, err)
}
