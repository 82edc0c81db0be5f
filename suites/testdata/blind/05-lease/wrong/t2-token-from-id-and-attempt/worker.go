package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Worker runs a Handler on leased tasks.
type Worker struct {
	q      LeaseQueue
	name   string
	cap    int
	poll   time.Duration
	handle Handler
	back   func(attempt int) time.Duration
}

// NewWorker returns a worker; see the README.
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	c := opts.Capacity
	if c <= 0 {
		c = 1
	}
	p := opts.PollInterval
	if p <= 0 {
		p = time.Second
	}
	return &Worker{q: q, name: opts.Name, cap: c, poll: p, handle: handle, back: opts.Backoff}
}

type runState struct {
	once  sync.Once
	fatal chan struct{}
	err   error
}

func (s *runState) fail(err error) {
	s.once.Do(func() { s.err = err; close(s.fatal) })
}

// Run leases tasks and works on them until ctx is done or the queue fails.
func (w *Worker) Run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker %s: %w", w.name, err)
	}
	st := &runState{fatal: make(chan struct{})}
	// handlers' parent: cancelled when ctx ends or the queue fails.
	work, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	go func() {
		select {
		case <-st.fatal:
			cancelWork()
		case <-work.Done():
		}
	}()
	settleCtx := context.WithoutCancel(ctx)
	slots := make(chan struct{}, w.cap)
	var wg sync.WaitGroup

loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-st.fatal:
			break loop
		case slots <- struct{}{}:
		}
		if ctx.Err() != nil || isClosed(st.fatal) {
			<-slots
			break
		}
		l, err := w.q.Lease(ctx, w.name)
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, ErrNoTask) {
				t := time.NewTimer(w.poll)
				select {
				case <-ctx.Done():
					t.Stop()
					break loop
				case <-st.fatal:
					t.Stop()
					break loop
				case <-t.C:
				}
				continue
			}
			st.fail(fmt.Errorf("worker %s: lease: %w", w.name, err))
			break
		}
		granted := l.Expires.Sub(time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			w.work(work, settleCtx, st, l, granted)
		}()
	}
	wg.Wait()
	if isClosed(st.fatal) {
		return st.err
	}
	return fmt.Errorf("worker %s: %w", w.name, ctx.Err())
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

type extendResult struct {
	l   Lease
	err error
}

// work runs the handler on l, keeping the lease alive, then settles it.
func (w *Worker) work(parent, settleCtx context.Context, st *runState, l Lease, granted time.Duration) {
	hctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.handle(hctx, l) }()

	renewCtx, stopRenew := context.WithCancel(settleCtx)
	defer stopRenew()
	expires := l.Expires
	lost := false
	var pending chan extendResult
	var herr error
	renewAt := time.NewTimer(time.Until(expires) - granted/2)
	endAt := time.NewTimer(time.Until(expires))
	defer renewAt.Stop()
	defer endAt.Stop()
wait:
	for {
		select {
		case herr = <-done:
			break wait
		case <-renewAt.C:
			if pending != nil || lost {
				continue
			}
			pending = make(chan extendResult, 1)
			p := pending
			go func() {
				nl, err := w.q.Extend(renewCtx, l.Token, granted)
				p <- extendResult{nl, err}
			}()
		case r := <-pending:
			pending = nil
			switch {
			case r.err == nil:
				expires = r.l.Expires
				renewAt.Reset(time.Until(expires) - granted/2)
				endAt.Reset(time.Until(expires))
			case errors.Is(r.err, ErrLeaseLost):
				lost = true
				cancel()
			default:
				if parent.Err() == nil || !isClosed(st.fatal) {
					st.fail(fmt.Errorf("worker %s: extend %s: %w", w.name, l.Task.ID, r.err))
				}
				cancel()
			}
		case <-endAt.C:
			if !lost {
				lost = true
				cancel()
			}
		}
	}
	stopRenew()
	if lost {
		return
	}
	if herr == nil {
		err := w.q.Ack(settleCtx, l.Token)
		if err != nil && !errors.Is(err, ErrLeaseLost) {
			st.fail(fmt.Errorf("worker %s: ack %s: %w", w.name, l.Task.ID, err))
		}
		return
	}
	var delay time.Duration // R15: the Backoff for this attempt (added by the kit when R15 changed)
	if w.back != nil {
		delay = w.back(l.Attempt)
	}
	err := w.q.Nack(settleCtx, l.Token, delay)
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		st.fail(fmt.Errorf("worker %s: nack %s: %w", w.name, l.Task.ID, err))
	}
}
