package backpressuresuite_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites/backpressuresuite"
	"github.com/fourth-outcome/labkit/task"
)

func TestLabIsValid(t *testing.T) {
	if err := backpressuresuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := backpressuresuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The suite must pass every correct queue, whatever its style. Besides the
// solution's ring buffer behind one mutex (and the actor queue among the
// fixtures in testdata/correct):

// TestChannelQueue runs the suite on a queue built from channels: the
// places are a buffered channel used as a semaphore, each tenant's share is
// another, and the jobs wait in a buffered channel; waiting for room is a
// select on the semaphore, a timer and the context. It is the fixture
// testdata/correct/channel-slots, renamed.
func TestChannelQueue(t *testing.T) {
	backpressuresuite.Run(t, newChanQueue, chanForecast)
}

type chanQueue struct {
	opts  task.AdmissionOptions
	limit int
	slots chan struct{}      // one token per place taken (waiting or reserved)
	jobs  chan task.Admitted // the waiting jobs

	tmu     sync.Mutex
	tenants map[string]chan struct{} // one token per place of the tenant's share

	mu       sync.Mutex // guards times, inFlight, the latencies; taken around jobs send and receive
	times    []time.Time
	inFlight map[task.Ticket]time.Time
	last     time.Duration
	longest  time.Duration

	tickets   atomic.Uint64
	rejected  atomic.Int64
	completed atomic.Int64
}

func newChanQueue(opts task.AdmissionOptions) *chanQueue {
	if opts.Capacity <= 0 {
		opts.Capacity = task.DefaultQueueCapacity
	}
	limit := opts.TenantLimit
	if limit <= 0 {
		limit = max(1, opts.Capacity/4)
	}
	limit = min(limit, opts.Capacity)
	return &chanQueue{
		opts:     opts,
		limit:    limit,
		slots:    make(chan struct{}, opts.Capacity),
		jobs:     make(chan task.Admitted, opts.Capacity),
		tenants:  map[string]chan struct{}{},
		inFlight: map[task.Ticket]time.Time{},
	}
}

func (q *chanQueue) share(tenant string) chan struct{} {
	q.tmu.Lock()
	defer q.tmu.Unlock()
	c, ok := q.tenants[tenant]
	if !ok {
		c = make(chan struct{}, q.limit)
		q.tenants[tenant] = c
	}
	return c
}

// acquire takes a token of c, waiting on timeout and ctx when they are
// not nil.
func acquire(ctx context.Context, c chan struct{}, timeout <-chan time.Time, wait bool, full error) error {
	select {
	case c <- struct{}{}:
		return nil
	default:
	}
	if !wait {
		return full
	}
	select {
	case c <- struct{}{}:
		return nil
	case <-timeout:
		return full
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *chanQueue) Submit(ctx context.Context, tenant, key string, job task.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wait := q.opts.MaxWait > 0
	var timeout <-chan time.Time
	if d, ok := ctx.Deadline(); wait && ok && !d.After(time.Now().Add(q.opts.MaxWait)) {
		timeout = make(chan time.Time) // the context's deadline ends the wait, on a tie too
	} else if wait {
		t := time.NewTimer(q.opts.MaxWait)
		defer t.Stop()
		timeout = t.C
	}
	share := q.share(tenant)
	if err := acquire(ctx, share, timeout, wait, task.ErrTenantFull); err != nil {
		// A tenant over its share is told so only when the queue has room
		// for others; a full queue is task.ErrQueueFull for everyone.
		if err == task.ErrTenantFull && len(q.slots) == cap(q.slots) {
			err = task.ErrQueueFull
		}
		if err == task.ErrQueueFull || err == task.ErrTenantFull {
			q.rejected.Add(1)
		}
		return fmt.Errorf("submit %s: %w", key, err)
	}
	if err := acquire(ctx, q.slots, timeout, wait, task.ErrQueueFull); err != nil {
		<-share
		if err == task.ErrQueueFull {
			q.rejected.Add(1)
		}
		return fmt.Errorf("submit %s: %w", key, err)
	}
	if q.opts.Claimer != nil {
		if err := q.opts.Claimer.Claim(ctx, tenant, key); err != nil {
			<-q.slots
			<-share
			return fmt.Errorf("submit %s: claim: %w", key, err)
		}
	}
	q.mu.Lock()
	now := time.Now()
	q.times = append(q.times, now)
	q.jobs <- task.Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: now} // never blocks: a slot is held
	q.mu.Unlock()
	return nil
}

func (q *chanQueue) Take(ctx context.Context) (task.Admitted, error) {
	if err := ctx.Err(); err != nil {
		return task.Admitted{}, err
	}
	q.mu.Lock()
	var a task.Admitted
	select {
	case a = <-q.jobs:
	default:
		q.mu.Unlock()
		return task.Admitted{}, task.ErrQueueEmpty
	}
	q.times = q.times[1:]
	a.Ticket = task.Ticket(q.tickets.Add(1))
	q.inFlight[a.Ticket] = a.Enqueued
	q.mu.Unlock()
	<-q.share(a.Tenant)
	<-q.slots
	return a, nil
}

func (q *chanQueue) Done(ctx context.Context, ticket task.Ticket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.inFlight[ticket]
	if !ok {
		return task.ErrUnknownTicket
	}
	delete(q.inFlight, ticket)
	q.last = time.Since(enq)
	q.longest = max(q.longest, q.last)
	q.completed.Add(1)
	return nil
}

func (q *chanQueue) Stats() task.AdmissionStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := task.AdmissionStats{
		Depth:       len(q.jobs),
		InFlight:    len(q.inFlight),
		Rejected:    q.rejected.Load(),
		Completed:   q.completed.Load(),
		LastLatency: q.last,
		MaxLatency:  q.longest,
	}
	if len(q.times) > 0 {
		s.OldestAge = time.Since(q.times[0])
	}
	return s
}

func chanForecast(backlog int, arrival, capacity float64) (task.BacklogForecast, error) {
	for _, r := range []float64{arrival, capacity} {
		if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
			return task.BacklogForecast{}, task.ErrInvalidRate
		}
	}
	if backlog < 0 {
		return task.BacklogForecast{}, task.ErrInvalidRate
	}
	f := task.BacklogForecast{Growth: arrival - capacity}
	if backlog == 0 {
		return f, nil
	}
	if capacity <= arrival {
		f.Never = true
		return f, nil
	}
	secs := float64(backlog) / (capacity - arrival)
	if secs >= math.MaxInt64/float64(time.Second) {
		f.Recovery = math.MaxInt64
		return f, nil
	}
	f.Recovery = time.Duration(secs * float64(time.Second))
	return f, nil
}
