package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Worker takes tasks from a LeaseQueue and runs a Handler on each.
type Worker struct {
	q      LeaseQueue
	name   string
	cap    int
	poll   time.Duration
	handle Handler
	back   func(attempt int) time.Duration
}

// NewWorker returns a worker named opts.Name that takes tasks from q.
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	w := &Worker{q: q, name: opts.Name, cap: opts.Capacity, poll: opts.PollInterval, handle: handle, back: opts.Backoff}
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
	w        *Worker
	ctx      context.Context // Run's ctx
	runCtx   context.Context // cancelled on shutdown or a queue failure
	stop     context.CancelFunc
	mu       sync.Mutex
	fatalErr error
}

func (r *run) fatal(err error) {
	r.mu.Lock()
	if r.fatalErr == nil {
		r.fatalErr = err
	}
	r.mu.Unlock()
	r.stop()
}

// Run leases tasks and works on them until ctx is done or the queue fails.
func (w *Worker) Run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: worker %s: %w", w.name, err)
	}
	r := &run{w: w, ctx: ctx}
	r.runCtx, r.stop = context.WithCancel(ctx)
	defer r.stop()

	slots := make(chan struct{}, w.cap)
	var wg sync.WaitGroup
loop:
	for {
		leaseStart := time.Now()
		l, err := w.q.Lease(r.runCtx, w.name)
		if err == nil {
			select {
			case slots <- struct{}{}:
			case <-r.runCtx.Done():
				break loop
			}
		}
		if err != nil {
			if r.runCtx.Err() != nil {
				break loop
			}
			if errors.Is(err, ErrNoTask) {
				t := time.NewTimer(w.poll)
				select {
				case <-t.C:
				case <-r.runCtx.Done():
					t.Stop()
					break loop
				}
				continue
			}
			r.fatal(fmt.Errorf("lease: worker %s: lease: %w", w.name, err))
			break loop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			r.work(l, l.Expires.Sub(leaseStart))
		}()
	}
	r.stop()
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatalErr != nil {
		return r.fatalErr
	}
	return fmt.Errorf("lease: worker %s stopped: %w", w.name, ctx.Err())
}

type renewal struct {
	l   Lease
	err error
}

// work runs the handler on l, renews its lease every half length, and
// settles it.
func (r *run) work(l Lease, length time.Duration) {
	if length <= 0 {
		length = time.Until(l.Expires)
	}
	hctx, hcancel := context.WithCancel(r.runCtx)
	defer hcancel()
	done := make(chan error, 1)
	granted := l
	token := l.Token
	go func() { done <- r.w.handle(hctx, granted) }()

	renewCtx, renewCancel := context.WithCancel(r.runCtx)
	defer renewCancel()
	renewed := make(chan renewal, 1)
	renewing := false
	var renewWG sync.WaitGroup
	defer renewWG.Wait()
	defer renewCancel()

	renewT := time.NewTimer(length / 2)
	defer renewT.Stop()
	expireT := time.NewTimer(time.Until(l.Expires))
	defer expireT.Stop()
	lost := false
	for {
		select {
		case herr := <-done:
			if lost {
				return
			}
			renewCancel()
			r.settle(l, herr)
			return
		case <-renewT.C:
			if lost || renewing {
				continue
			}
			renewing = true
			renewWG.Add(1)
			go func() {
				defer renewWG.Done()
				nl, err := r.w.q.Extend(renewCtx, token, length)
				renewed <- renewal{nl, err}
			}()
		case rn := <-renewed:
			renewing = false
			switch {
			case lost:
			case rn.err == nil:
				l.Expires = rn.l.Expires
				renewT.Reset(length / 2)
				expireT.Stop()
				expireT = time.NewTimer(time.Until(l.Expires))
			case errors.Is(rn.err, ErrLeaseLost):
				lost = true
				hcancel()
			case r.runCtx.Err() != nil:
				// shutting down: the handler is being cancelled
			default:
				r.fatal(fmt.Errorf("lease: worker %s: extend: %w", r.w.name, rn.err))
			}
		case <-expireT.C:
			lost = true
			hcancel()
		}
	}
}

// settle acknowledges or releases a finished task whose lease is still held.
func (r *run) settle(l Lease, herr error) {
	ctx := context.WithoutCancel(r.ctx)
	var err error
	what := "ack"
	if herr == nil {
		err = r.w.q.Ack(ctx, l.Token)
	} else {
		what = "nack"
		var delay time.Duration // R15: the Backoff for this attempt (added by the kit when R15 changed)
		if r.w.back != nil {
			delay = r.w.back(l.Attempt)
		}
		err = r.w.q.Nack(ctx, l.Token, delay)
	}
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		r.fatal(fmt.Errorf("lease: worker %s: %s: %w", r.w.name, what, err))
	}
}
