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
	q        LeaseQueue
	name     string
	capacity int
	poll     time.Duration
	backoff  func(attempt int) time.Duration
	handle   Handler
}

// NewWorker returns a worker named opts.Name that takes tasks from q and
// runs handle on each.
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	w := &Worker{q: q, name: opts.Name, capacity: opts.Capacity, poll: opts.PollInterval, backoff: opts.Backoff, handle: handle}
	if w.capacity <= 0 {
		w.capacity = 1
	}
	if w.poll <= 0 {
		w.poll = time.Second
	}
	return w
}

// run is the state of one Run call.
type run struct {
	ctx    context.Context // the caller's
	work   context.Context // cancelled on shutdown and on a queue failure
	cancel context.CancelFunc

	mu    sync.Mutex
	fatal error
}

func (r *run) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *run) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// Run leases tasks and works on them until ctx is done or the queue fails.
func (w *Worker) Run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker %s: %w", w.name, err)
	}
	r := &run{ctx: ctx}
	r.work, r.cancel = context.WithCancel(ctx)
	defer r.cancel()

	slots := make(chan struct{}, w.capacity)
	var wg sync.WaitGroup
loop:
	for {
		select {
		case slots <- struct{}{}:
		case <-r.work.Done():
			break loop
		}
		l, err := w.q.Lease(r.work, w.name)
		leasedAt := time.Now()
		if err != nil {
			<-slots
			if r.work.Err() != nil {
				break loop
			}
			if errors.Is(err, ErrNoTask) {
				t := time.NewTimer(w.poll)
				select {
				case <-t.C:
				case <-r.work.Done():
					t.Stop()
					break loop
				}
				continue
			}
			r.fail(fmt.Errorf("lease: %w", err))
			break loop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			w.work(r, l, leasedAt)
		}()
	}
	r.cancel()
	wg.Wait()
	if err := r.failed(); err != nil {
		return fmt.Errorf("worker %s: %w", w.name, err)
	}
	return fmt.Errorf("worker %s: %w", w.name, ctx.Err())
}

type extended struct {
	l     Lease
	err   error
	start time.Time
}

// work runs the handler on l, renews its lease while it runs, and settles
// the task when it returns (unless the lease was lost).
func (w *Worker) work(r *run, l Lease, leasedAt time.Time) {
	hctx, cancel := context.WithCancel(r.work)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.handle(hctx, l) }()

	length := l.Expires.Sub(leasedAt)
	renewEvery := length / 2
	if renewEvery <= 0 {
		renewEvery = time.Nanosecond
	}
	renew := time.NewTimer(renewEvery)
	defer renew.Stop()
	expiry := time.NewTimer(time.Until(l.Expires))
	defer expiry.Stop()
	ext := make(chan extended, 1)
	inflight, lost := false, false

	for {
		select {
		case herr := <-done:
			if lost || r.failed() != nil {
				return
			}
			w.settle(r, l, herr)
			return
		case <-renew.C:
			if inflight || lost || length <= 0 {
				continue
			}
			inflight = true
			start := time.Now()
			go func() {
				nl, err := w.q.Extend(r.work, l.Token, length)
				ext <- extended{nl, err, start}
			}()
		case e := <-ext:
			inflight = false
			if lost {
				continue
			}
			switch {
			case e.err == nil:
				expiry.Reset(time.Until(e.l.Expires))
				next := e.start.Add(renewEvery).Sub(time.Now())
				if next <= 0 {
					next = time.Nanosecond
				}
				renew.Reset(next)
			case errors.Is(e.err, ErrLeaseLost):
				lost = true
				cancel()
			case r.work.Err() != nil:
				// shutting down: the renewal was cut short, not refused.
			default:
				r.fail(fmt.Errorf("extend: %w", e.err))
			}
		case <-expiry.C:
			if !lost {
				lost = true
				cancel()
			}
		}
	}
}

// settle acknowledges a finished task or releases a failed one.
func (w *Worker) settle(r *run, l Lease, herr error) {
	ctx := context.WithoutCancel(r.ctx)
	var err error
	if herr == nil {
		err = w.q.Ack(ctx, l.Token)
		if err != nil {
			err = fmt.Errorf("ack: %w", err)
		}
	} else {
		var delay time.Duration
		if w.backoff != nil {
			delay = w.backoff(l.Attempt)
		}
		err = w.q.Nack(ctx, l.Token, delay)
		if err != nil {
			err = fmt.Errorf("nack: %w", err)
		}
	}
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		r.fail(err)
	}
}
