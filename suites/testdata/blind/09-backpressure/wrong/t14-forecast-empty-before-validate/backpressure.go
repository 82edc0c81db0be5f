// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
//
// Lab 09: bounded admission and backlog math. Read README.md in this
// directory first, then make `go run ./cmd/labctl check 9` pass.
//
// The scenario: producers of many tenants submit signing jobs faster than
// the workers can finish them, in bursts, and sometimes for good. A queue
// absorbs a burst; it cannot absorb a rate mismatch. So this queue holds a
// bounded number of jobs, refuses the rest clearly (at once, or after a
// bounded wait), admits a job before it claims its idempotency key, keeps
// each tenant to its share, and reports how long its oldest job has waited.
// ForecastBacklog says how fast a backlog grows and when it drains.
package backpressure

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// The types the queue shares with the suite and the later labs. They are
// defined in package task and re-exported here. Do not change them.

// Task is the job a producer submits; Task.ID names it.
type Task = task.Task

// Options configure a Queue.
type Options = task.AdmissionOptions

// Claimer claims idempotency keys (lab 01's store, seen from here).
type Claimer = task.KeyClaimer

// Ticket identifies a taken job, for its Done.
type Ticket = task.Ticket

// Admitted is a job as Take hands it out.
type Admitted = task.Admitted

// Stats is what the queue reports about itself.
type Stats = task.AdmissionStats

// Forecast is what ForecastBacklog says about a backlog.
type Forecast = task.BacklogForecast

// DefaultCapacity is the capacity of a queue whose Options.Capacity is zero
// or negative.
const DefaultCapacity = task.DefaultQueueCapacity

// The errors of a Queue and of ForecastBacklog, matched with errors.Is.
var (
	ErrQueueFull     = task.ErrQueueFull
	ErrTenantFull    = task.ErrTenantFull
	ErrQueueEmpty    = task.ErrQueueEmpty
	ErrUnknownTicket = task.ErrUnknownTicket
	ErrInvalidRate   = task.ErrInvalidRate
)

type entry struct {
	tenant, key string
	job         Task
	enqueued    time.Time
}

// Queue is a bounded admission queue. It must be safe for concurrent use.
// Build it with New.
type Queue struct {
	capacity    int
	tenantLimit int
	maxWait     time.Duration
	claimer     Claimer

	mu       sync.Mutex
	reserved int            // places taken: reserved or waiting
	tenants  map[string]int // per tenant: places reserved or waiting
	buf      []entry        // ring buffer of the waiting jobs
	head     int
	n        int
	inflight map[Ticket]time.Time
	next     Ticket
	freed    chan struct{} // closed and replaced when a place is freed

	rejected, completed int64
	lastLat, maxLat     time.Duration
}

// New returns an empty queue.
func New(opts Options) *Queue {
	c := opts.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	tl := opts.TenantLimit
	if tl <= 0 {
		tl = c / 4
		if tl < 1 {
			tl = 1
		}
	}
	if tl > c {
		tl = c
	}
	mw := opts.MaxWait
	if mw < 0 {
		mw = 0
	}
	return &Queue{
		capacity: c, tenantLimit: tl, maxWait: mw, claimer: opts.Claimer,
		tenants:  make(map[string]int),
		buf:      make([]entry, c),
		inflight: make(map[Ticket]time.Time),
		freed:    make(chan struct{}),
	}
}

// tryReserveLocked reserves a place for tenant, or says why it cannot.
func (q *Queue) tryReserveLocked(tenant string) error {
	if q.reserved >= q.capacity {
		return ErrQueueFull
	}
	if q.tenants[tenant] >= q.tenantLimit {
		return ErrTenantFull
	}
	q.reserved++
	q.tenants[tenant]++
	return nil
}

// releaseLocked gives back one place of tenant and wakes the waiters.
func (q *Queue) releaseLocked(tenant string) {
	q.reserved--
	if q.tenants[tenant] <= 1 {
		delete(q.tenants, tenant)
	} else {
		q.tenants[tenant]--
	}
	close(q.freed)
	q.freed = make(chan struct{})
}

// Submit admits job for tenant under the idempotency key.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: submit %q/%q: %w", tenant, key, err)
	}
	if err := q.admit(ctx, tenant); err != nil {
		return fmt.Errorf("backpressure: submit %q/%q: %w", tenant, key, err)
	}
	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.releaseLocked(tenant)
			q.mu.Unlock()
			return fmt.Errorf("backpressure: claim %q/%q: %w", tenant, key, err)
		}
	}
	q.mu.Lock()
	q.buf[(q.head+q.n)%q.capacity] = entry{tenant: tenant, key: key, job: job, enqueued: time.Now()}
	q.n++
	q.mu.Unlock()
	return nil
}

// admit reserves a place, waiting for one when MaxWait allows it.
func (q *Queue) admit(ctx context.Context, tenant string) error {
	start := time.Now()
	q.mu.Lock()
	err := q.tryReserveLocked(tenant)
	if err == nil {
		q.mu.Unlock()
		return nil
	}
	if q.maxWait <= 0 {
		q.rejected++
		q.mu.Unlock()
		return err
	}
	q.mu.Unlock()

	end := start.Add(q.maxWait)
	var timeout <-chan time.Time
	if dl, ok := ctx.Deadline(); !ok || dl.After(end) {
		// MaxWait ends strictly before the context's deadline.
		t := time.NewTimer(time.Until(end))
		defer t.Stop()
		timeout = t.C
	}
	for {
		q.mu.Lock()
		ch := q.freed
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			q.mu.Lock()
			err := q.tryReserveLocked(tenant)
			if err != nil {
				q.rejected++
			}
			q.mu.Unlock()
			return err
		case <-ch:
			q.mu.Lock()
			err := q.tryReserveLocked(tenant)
			q.mu.Unlock()
			if err == nil {
				return nil
			}
		}
	}
}

// Take hands out the oldest waiting job with a new ticket.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", ErrQueueEmpty)
	}
	e := q.buf[q.head]
	q.buf[q.head] = entry{}
	q.head = (q.head + 1) % q.capacity
	q.n--
	q.releaseLocked(e.tenant)
	q.next++
	t := q.next
	q.inflight[t] = e.enqueued
	return Admitted{Ticket: t, Tenant: e.tenant, Key: e.key, Job: e.job, Enqueued: e.enqueued}, nil
}

// Done reports that the job of ticket is finished.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: done %d: %w", ticket, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.inflight[ticket]
	if !ok {
		return fmt.Errorf("backpressure: done %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.inflight, ticket)
	lat := time.Since(enq)
	q.completed++
	q.lastLat = lat
	if lat > q.maxLat {
		q.maxLat = lat
	}
	return nil
}

// Stats reports the queue now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{
		Depth:       q.n,
		InFlight:    len(q.inflight),
		Rejected:    q.rejected,
		Completed:   q.completed,
		LastLatency: q.lastLat,
		MaxLatency:  q.maxLat,
	}
	if q.n > 0 {
		s.OldestAge = time.Since(q.buf[q.head].enqueued)
	}
	return s
}

// ForecastBacklog says what becomes of a backlog of jobs.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	if backlog == 0 {
		return Forecast{Growth: arrival - capacity}, nil // nothing to drain
	}
	bad := func(r float64) bool { return math.IsNaN(r) || math.IsInf(r, 0) || r < 0 }
	if backlog < 0 || bad(arrival) || bad(capacity) {
		return Forecast{}, fmt.Errorf("backpressure: forecast(%d, %g, %g): %w", backlog, arrival, capacity, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	if backlog == 0 {
		return f, nil
	}
	if capacity <= arrival {
		f.Never = true
		return f, nil
	}
	ns := float64(backlog) * 1e9 / (capacity - arrival)
	if ns >= math.MaxInt64 {
		f.Recovery = time.Duration(math.MaxInt64)
	} else {
		f.Recovery = time.Duration(ns)
	}
	return f, nil
}
