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
	q       LeaseQueue
	name    string
	cap     int
	poll    time.Duration
	backoff func(int) time.Duration
	handle  Handler
}

// NewWorker returns a worker named opts.Name that takes tasks from q and
// runs handle on each.
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	w := &Worker{q: q, name: opts.Name, cap: opts.Capacity, poll: opts.PollInterval, backoff: opts.Backoff, handle: handle}
	if w.cap <= 0 {
		w.cap = 1
	}
	if w.poll <= 0 {
		w.poll = time.Second
	}
	return w
}

// run is the state of one Run call.
type run struct {
	w      *Worker
	ctx    context.Context // Run's ctx
	hbase  context.Context // parent of the handlers' contexts
	stop   context.CancelFunc
	settle context.Context // for Ack and Nack: not cancelled with ctx
	mu     sync.Mutex
	fatal  error
	wg     sync.WaitGroup
	slots  chan struct{}
}

func (r *run) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.stop()
}

func (r *run) stopping() bool { return r.hbase.Err() != nil }

// Run leases tasks and works on them until ctx is done or the queue fails.
func (w *Worker) Run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker %s: %w", w.name, err)
	}
	hbase, stop := context.WithCancel(ctx)
	defer stop()
	r := &run{w: w, ctx: ctx, hbase: hbase, stop: stop, settle: context.WithoutCancel(ctx), slots: make(chan struct{}, w.cap)}
	r.loop()
	r.wg.Wait()
	r.mu.Lock()
	fatal := r.fatal
	r.mu.Unlock()
	if fatal != nil {
		return fmt.Errorf("worker %s: %w", w.name, fatal)
	}
	return fmt.Errorf("worker %s: %w", w.name, ctx.Err())
}

func (r *run) loop() {
	w := r.w
	for {
		select {
		case r.slots <- struct{}{}:
		case <-r.hbase.Done():
			return
		}
		if r.stopping() {
			<-r.slots
			return
		}
		l, err := w.q.Lease(r.hbase, w.name)
		start := time.Now()
		if err != nil {
			<-r.slots
			if r.stopping() {
				return
			}
			if errors.Is(err, ErrNoTask) {
				t := time.NewTimer(w.poll)
				select {
				case <-t.C:
				case <-r.hbase.Done():
					t.Stop()
					return
				}
				continue
			}
			r.fail(fmt.Errorf("lease: %w", err))
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { <-r.slots }()
			r.work(l, start)
		}()
	}
}

type extendResult struct {
	l   Lease
	err error
}

// work runs the handler on l, renews the lease while it runs, and settles
// the task.
func (r *run) work(l Lease, start time.Time) {
	w := r.w
	length := l.Expires.Sub(start)
	hctx, cancel := context.WithCancel(r.hbase)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.handle(hctx, l) }()

	renew := time.NewTimer(length / 2)
	defer renew.Stop()
	end := time.NewTimer(time.Until(l.Expires))
	defer end.Stop()
	var extending chan extendResult
	lost := false
	for {
		select {
		case herr := <-done:
			if lost {
				return
			}
			r.settleTask(l, herr)
			return
		case <-renew.C:
			if lost || extending != nil {
				continue
			}
			ch := make(chan extendResult, 1)
			extending = ch
			go func() {
				nl, err := w.q.Extend(hctx, l.Token, length)
				ch <- extendResult{nl, err}
			}()
		case res := <-extending:
			extending = nil
			switch {
			case res.err == nil:
				end.Reset(time.Until(res.l.Expires))
				renew.Reset(length / 2)
			case errors.Is(res.err, ErrLeaseLost):
				lost = true
				cancel()
			case hctx.Err() != nil:
				// The worker is stopping, or the lease is already lost.
			default:
				r.fail(fmt.Errorf("extend: %w", res.err))
			}
		case <-end.C:
			lost = true
			cancel()
		}
	}
}

func (r *run) settleTask(l Lease, herr error) {
	w := r.w
	r.mu.Lock()
	failed := r.fatal != nil
	r.mu.Unlock()
	if failed {
		// The queue failed: leave unfinished work to its lease.
		if herr != nil {
			return
		}
	}
	var err error
	if herr == nil {
		err = w.q.Ack(r.settle, l.Token)
	} else {
		var delay time.Duration
		if w.backoff != nil {
			delay = w.backoff(l.Attempt)
		}
		err = w.q.Nack(r.settle, l.Token, delay)
	}
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		r.fail(fmt.Errorf("settle: %w", err))
	}
}
