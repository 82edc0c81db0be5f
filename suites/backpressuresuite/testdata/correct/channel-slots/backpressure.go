// Package backpressure, a correct alternative written with channels: the
// places are a buffered channel used as a semaphore (a Submit sends a token
// to take a place, a Take receives one to free it), each tenant's share is
// another such channel, and the jobs wait in a buffered channel of the
// same capacity. Waiting for room is a select on the semaphore, a timer
// and the context. A small mutex-guarded list mirrors the enqueue instants
// of the jobs in the channel, for the age of the oldest one.
package backpressure

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

type (
	Task     = task.Task
	Options  = task.AdmissionOptions
	Claimer  = task.KeyClaimer
	Ticket   = task.Ticket
	Admitted = task.Admitted
	Stats    = task.AdmissionStats
	Forecast = task.BacklogForecast
)

const DefaultCapacity = task.DefaultQueueCapacity

var (
	ErrQueueFull     = task.ErrQueueFull
	ErrTenantFull    = task.ErrTenantFull
	ErrQueueEmpty    = task.ErrQueueEmpty
	ErrUnknownTicket = task.ErrUnknownTicket
	ErrInvalidRate   = task.ErrInvalidRate
)

type Queue struct {
	opts  Options
	limit int
	slots chan struct{} // one token per place taken (waiting or reserved)
	jobs  chan Admitted // the waiting jobs

	tmu     sync.Mutex
	tenants map[string]chan struct{} // one token per place of the tenant's share

	mu       sync.Mutex // guards times, inFlight, the latencies; taken around jobs send and receive
	times    []time.Time
	inFlight map[Ticket]time.Time
	last     time.Duration
	longest  time.Duration

	tickets   atomic.Uint64
	rejected  atomic.Int64
	completed atomic.Int64
}

func New(opts Options) *Queue {
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	limit := opts.TenantLimit
	if limit <= 0 {
		limit = max(1, opts.Capacity/4)
	}
	limit = min(limit, opts.Capacity)
	return &Queue{
		opts:     opts,
		limit:    limit,
		slots:    make(chan struct{}, opts.Capacity),
		jobs:     make(chan Admitted, opts.Capacity),
		tenants:  map[string]chan struct{}{},
		inFlight: map[Ticket]time.Time{},
	}
}

func (q *Queue) share(tenant string) chan struct{} {
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

func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
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
	if err := acquire(ctx, share, timeout, wait, ErrTenantFull); err != nil {
		// A tenant over its share is told so only when the queue has room
		// for others; a full queue is ErrQueueFull for everyone.
		if err == ErrTenantFull && len(q.slots) == cap(q.slots) {
			err = ErrQueueFull
		}
		if err == ErrQueueFull || err == ErrTenantFull {
			q.rejected.Add(1)
		}
		return fmt.Errorf("submit %s: %w", key, err)
	}
	if err := acquire(ctx, q.slots, timeout, wait, ErrQueueFull); err != nil {
		<-share
		if err == ErrQueueFull {
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
	q.jobs <- Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: now} // never blocks: a slot is held
	q.mu.Unlock()
	return nil
}

func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, err
	}
	q.mu.Lock()
	var a Admitted
	select {
	case a = <-q.jobs:
	default:
		q.mu.Unlock()
		return Admitted{}, ErrQueueEmpty
	}
	q.times = q.times[1:]
	a.Ticket = Ticket(q.tickets.Add(1))
	q.inFlight[a.Ticket] = a.Enqueued
	q.mu.Unlock()
	<-q.share(a.Tenant)
	<-q.slots
	return a, nil
}

func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.inFlight[ticket]
	if !ok {
		return ErrUnknownTicket
	}
	delete(q.inFlight, ticket)
	q.last = time.Since(enq)
	q.longest = max(q.longest, q.last)
	q.completed.Add(1)
	return nil
}

func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{
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

func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	for _, r := range []float64{arrival, capacity} {
		if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
			return Forecast{}, ErrInvalidRate
		}
	}
	if backlog < 0 {
		return Forecast{}, ErrInvalidRate
	}
	f := Forecast{Growth: arrival - capacity}
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
