package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Worker struct {
	q        LeaseQueue
	opts     WorkerOptions
	handle   Handler
	capacity int
	poll     time.Duration
}

func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	w := &Worker{q: q, opts: opts, handle: handle, capacity: opts.Capacity, poll: opts.PollInterval}
	if w.capacity < 1 {
		w.capacity = 1
	}
	if w.poll <= 0 {
		w.poll = time.Second
	}
	return w
}

// Run starts Capacity identical loops; each leases only when it is idle.
func (w *Worker) Run(ctx context.Context) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for range w.capacity {
		wg.Go(func() {
			if err := w.loop(ctx); err != nil {
				stop(err)
			}
		})
	}
	wg.Wait()
	cause := context.Cause(ctx)
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("worker %s: %w", w.opts.Name, cause)
	}
	return cause
}

func (w *Worker) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		l, err := w.q.Lease(ctx, w.opts.Name)
		switch {
		case err == nil:
			if err := w.one(ctx, l); err != nil {
				return err
			}
		case errors.Is(err, ErrNoTask):
			select {
			case <-time.After(w.poll):
			case <-ctx.Done():
			}
		case ctx.Err() != nil:
		default:
			return fmt.Errorf("lease: %w", err)
		}
	}
	return nil
}

// one works on l: a heartbeat goroutine renews every third of the lease,
// and a watchdog cancels the handler at the lease's expiry unless a
// renewal moved it.
func (w *Worker) one(ctx context.Context, l Lease) error {
	length := time.Until(l.Expires)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	expires := l.Expires
	watchdog := time.AfterFunc(length, func() { cancel(ErrLeaseLost) })
	defer watchdog.Stop()

	beat := make(chan error, 1)
	stopBeat := make(chan struct{})
	go func() {
		tick := time.NewTicker(max(length/3, 1))
		defer tick.Stop()
		for {
			select {
			case <-stopBeat:
				beat <- nil
				return
			case <-tick.C:
			}
			mu.Lock()
			deadline := expires
			mu.Unlock()
			rctx, rcancel := context.WithDeadline(ctx, deadline)
			renewed, err := w.q.Extend(rctx, l.Token, length)
			timedOut := rctx.Err() != nil
			rcancel()
			if err != nil {
				switch {
				case ctx.Err() != nil:
					beat <- nil
				case errors.Is(err, ErrLeaseLost) || timedOut:
					cancel(ErrLeaseLost)
					beat <- nil
				default:
					cancel(err)
					beat <- fmt.Errorf("extend: %w", err)
				}
				return
			}
			mu.Lock()
			expires = renewed.Expires
			mu.Unlock()
			watchdog.Reset(time.Until(renewed.Expires))
		}
	}()
	handled := w.handle(hctx, l)
	close(stopBeat)
	if err := <-beat; err != nil {
		return err
	}
	if errors.Is(context.Cause(hctx), ErrLeaseLost) && ctx.Err() == nil {
		return nil // lost: not ours to settle
	}
	sctx := context.WithoutCancel(ctx)
	var err error
	if handled == nil {
		err = w.q.Ack(sctx, l.Token)
	} else {
		var delay time.Duration // R15: the Backoff for this attempt (added by the kit when R15 changed)
		if w.opts.Backoff != nil {
			delay = w.opts.Backoff(l.Attempt)
		}
		err = w.q.Nack(sctx, l.Token, delay)
	}
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		return fmt.Errorf("settle: %w", err)
	}
	return nil
}
