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
type Worker struct {
	queue    LeaseQueue
	name     string
	capacity int
	poll     time.Duration
	backoff  func(attempt int) time.Duration
	handle   Handler
}

// NewWorker returns a worker named opts.Name that takes tasks from q and
// runs handle on each. opts.Capacity is how many tasks it works on at once
// (zero or less means 1); opts.PollInterval is how long it waits after the
// queue had no visible task (zero or less means one second).
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	w := &Worker{queue: q, name: opts.Name, capacity: opts.Capacity, poll: opts.PollInterval, backoff: opts.Backoff, handle: handle}
	if w.capacity <= 0 {
		w.capacity = 1
	}
	if w.poll <= 0 {
		w.poll = time.Second
	}
	return w
}

// Run leases tasks and works on them until ctx is done or the queue fails.
//
//   - It calls Lease only when fewer than Capacity tasks are being worked
//     on, so it never holds a lease it has no room to work on. When the
//     queue has no visible task it waits PollInterval before asking again.
//   - Each task's handler runs in a goroutine of its own. While it runs,
//     the worker renews the lease whenever half of its length has passed,
//     for the same length, so work may take longer than the visibility
//     timeout.
//   - The handler's ctx is cancelled as soon as the lease is lost: when
//     Extend says ErrLeaseLost, or when a renewal has not succeeded by the
//     time the lease ends. The worker then neither acknowledges nor
//     releases the task: it is someone else's.
//   - A handler that returns nil gets its task acknowledged; one that
//     returns an error gets it released (Nack) for another delivery at
//     once. ErrLeaseLost from Ack or Nack is not an error of the worker.
//   - Any other error from the queue stops the worker: Run stops leasing,
//     cancels the running handlers, waits for them and returns an error
//     wrapping the queue's. When ctx is done, Run stops leasing, cancels
//     the handlers, waits for them, acknowledges or releases their tasks as
//     above, and returns an error wrapping ctx.Err().
func (w *Worker) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  error
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err; stop() })
	}
	// A slot is taken before each Lease and given back when the task is
	// settled, so the number of leases held never exceeds the capacity.
	slots := make(chan struct{}, w.capacity)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case slots <- struct{}{}:
			l, err := w.queue.Lease(ctx, w.name)
			switch {
			case err == nil:
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					if err := w.work(ctx, l); err != nil {
						fail(err)
					}
				}()
			case errors.Is(err, ErrNoTask):
				<-slots
				wait := time.NewTimer(w.poll)
				select {
				case <-wait.C:
				case <-ctx.Done():
					wait.Stop()
				}
			default:
				<-slots
				if ctx.Err() == nil { // not the queue refusing a cancelled ctx
					fail(fmt.Errorf("worker %s: lease: %w", w.name, err))
				}
			}
		}
	}
	wg.Wait() // every fail call has returned: failure is settled
	if failure != nil {
		return failure
	}
	return fmt.Errorf("worker %s: stopped: %w", w.name, context.Cause(ctx))
}

// errExpired says a renewal did not succeed before the lease ended.
var errExpired = errors.New("the lease ended before it could be renewed")

// work runs the handler on l, renews the lease while the handler runs, and
// settles the task when it returns. It returns an error only when the queue
// failed.
func (w *Worker) work(ctx context.Context, l Lease) error {
	length := time.Until(l.Expires) // as granted: each renewal asks for as much
	every := max(length/2, 1)

	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	result := make(chan error, 1)
	go func(l Lease) { result <- w.handle(hctx, l) }(l) // l changes with each renewal

	renew := time.NewTimer(every)
	defer renew.Stop()
	for {
		select {
		case err := <-result:
			return w.settle(ctx, l, err)
		case <-renew.C:
			renewed, err := w.renew(ctx, l, length)
			if err != nil {
				// Lost, the queue failed, or the worker is stopping:
				// the work must stop now. Only in the last case is the
				// lease still ours to settle.
				cancel()
				handled := <-result
				switch {
				case ctx.Err() != nil: // the worker is stopping, and the lease is still ours
					return w.settle(ctx, l, handled)
				case errors.Is(err, ErrLeaseLost), errors.Is(err, errExpired):
					return nil
				default:
					return err
				}
			}
			l = renewed
			renew.Reset(every)
		}
	}
}

// renew extends l by length from now. A renewal that has not succeeded when
// the lease ends is too late, whatever the queue says afterwards.
func (w *Worker) renew(ctx context.Context, l Lease, length time.Duration) (Lease, error) {
	rctx, cancel := context.WithTimeout(ctx, length) // a renewal may take as long as a lease lasts
	defer cancel()
	renewed, err := w.queue.Extend(rctx, l.Token, length)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		return Lease{}, fmt.Errorf("worker %s: extend %s: %w", w.name, l, errExpired)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("worker %s: extend %s: %w", w.name, l, err)
	}
	return renewed, nil
}

// settle acknowledges l's task when the handler succeeded and releases it
// for another delivery when it failed. The outcome must reach the queue
// even when the worker is stopping, so ctx's cancellation does not apply.
func (w *Worker) settle(ctx context.Context, l Lease, handled error) error {
	ctx = context.WithoutCancel(ctx)
	op, err := "ack", error(nil)
	if handled == nil {
		err = w.queue.Ack(ctx, l.Token)
	} else {
		var delay time.Duration // R15: the Backoff for this attempt (added by the kit when R15 changed)
		if w.backoff != nil {
			delay = w.backoff(l.Attempt)
		}
		op, err = "nack", w.queue.Nack(ctx, l.Token, delay)
	}
	if err == nil || errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return fmt.Errorf("worker %s: %s %s: %w", w.name, op, l, err)
}
