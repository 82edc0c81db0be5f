// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
//
// A correct alternative: one FIFO per tenant, merged by sequence number at Take. A queue absorbs a burst; it
// cannot absorb a rate mismatch. So this queue holds at most Capacity jobs
// waiting, and a job that finds no room is refused at once (shed) or after
// a bounded wait (block, with a deadline), never queued without bound. It
// admits a job before it claims the job's idempotency key, so a refused job
// leaves its key free for the client's retry. Each tenant has a bounded
// share, so a noisy tenant cannot fill the queue for everyone. And it
// reports the age of its oldest job and its completion latency, which say
// how far behind it is, where its depth alone does not.
package backpressure

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// Queue keeps one FIFO per tenant; Take merges them by the sequence number
// each job got when it was queued, so the oldest job comes out first.
type Queue struct {
	cap, share int
	wait       time.Duration
	claimer    Claimer

	mu      sync.Mutex
	tenants map[string]*tenantQ
	held    int // places held in all tenants: waiting plus claiming
	waiting int // jobs waiting
	seq     uint64
	wake    chan struct{}
	ticket  Ticket
	flight  map[Ticket]time.Time
	st      Stats
}

type entry struct {
	seq uint64
	a   Admitted
}

type tenantQ struct {
	jobs     []entry
	claiming int
}

// New returns an empty queue.
func New(o Options) *Queue {
	c := o.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	sh := o.TenantLimit
	switch {
	case sh <= 0:
		sh = max(c/4, 1)
	case sh > c:
		sh = c
	}
	return &Queue{cap: c, share: sh, wait: o.MaxWait, claimer: o.Claimer,
		tenants: map[string]*tenantQ{}, wake: make(chan struct{}), flight: map[Ticket]time.Time{}}
}

func (q *Queue) tq(t string) *tenantQ {
	x := q.tenants[t]
	if x == nil {
		x = &tenantQ{}
		q.tenants[t] = x
	}
	return x
}

func (q *Queue) used(t string) int {
	if x := q.tenants[t]; x != nil {
		return len(x.jobs) + x.claiming
	}
	return 0
}

// free is called when a place of t is freed. q.mu is held.
func (q *Queue) free(t string) {
	q.held--
	if x := q.tenants[t]; x != nil && len(x.jobs) == 0 && x.claiming == 0 {
		delete(q.tenants, t)
	}
	close(q.wake)
	q.wake = make(chan struct{})
}

// Submit admits, claims, then queues.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("submit %s: %w", key, err)
	}
	var timeout <-chan time.Time
	expired := false
	q.mu.Lock()
	for {
		var why error
		if q.held >= q.cap {
			why = ErrQueueFull
		} else if q.used(tenant) >= q.share {
			why = ErrTenantFull
		}
		if why == nil {
			break
		}
		if q.wait <= 0 || expired {
			q.st.Rejected++
			q.mu.Unlock()
			return fmt.Errorf("submit %s: %w", key, why)
		}
		if timeout == nil {
			t := time.NewTimer(q.wait)
			defer t.Stop()
			timeout = t.C
		}
		w := q.wake
		q.mu.Unlock()
		select {
		case <-w:
		case <-timeout:
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				// MaxWait and the context's deadline end together: the
				// context's wins, whichever channel select picked.
				return fmt.Errorf("submit %s: %w", key, context.DeadlineExceeded)
			}
			expired = true // one last look: refused unless a place is free
		case <-ctx.Done():
			return fmt.Errorf("submit %s: %w", key, ctx.Err())
		}
		q.mu.Lock()
	}
	q.held++
	q.tq(tenant).claiming++
	q.mu.Unlock()

	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.tenants[tenant].claiming--
			q.free(tenant)
			q.mu.Unlock()
			return fmt.Errorf("submit %s: claim: %w", key, err)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	x := q.tenants[tenant]
	x.claiming--
	q.seq++
	x.jobs = append(x.jobs, entry{q.seq, Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()}})
	q.waiting++
	return nil
}

// Take hands out the job with the smallest sequence number among the
// tenants' heads.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	x := q.oldest()
	if x == nil {
		return Admitted{}, fmt.Errorf("take: %w", ErrQueueEmpty)
	}
	a := x.jobs[0].a
	x.jobs = slices.Delete(x.jobs, 0, 1)
	q.waiting--
	q.ticket++
	a.Ticket = q.ticket
	q.flight[a.Ticket] = a.Enqueued
	q.free(a.Tenant)
	return a, nil
}

// oldest returns the tenant queue whose head job is the oldest. q.mu is held.
func (q *Queue) oldest() *tenantQ {
	var best *tenantQ
	for _, x := range q.tenants {
		if len(x.jobs) > 0 && (best == nil || x.jobs[0].seq < best.jobs[0].seq) {
			best = x
		}
	}
	return best
}

// Done records the completion latency of ticket's job.
func (q *Queue) Done(ctx context.Context, t Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("done: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.flight[t]
	if !ok {
		return fmt.Errorf("done %d: %w", t, ErrUnknownTicket)
	}
	delete(q.flight, t)
	d := time.Since(enq)
	q.st.Completed++
	q.st.LastLatency = d
	q.st.MaxLatency = max(d, q.st.MaxLatency)
	return nil
}

// Stats reports the queue now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.st
	s.Depth = q.waiting
	s.InFlight = len(q.flight)
	if x := q.oldest(); x != nil {
		s.OldestAge = time.Since(x.jobs[0].a.Enqueued)
	}
	return s
}

// ForecastBacklog: special cases first, then the division in float
// nanoseconds, clamped to the longest Duration.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	for _, r := range []float64{arrival, capacity} {
		if !(r >= 0) || math.IsInf(r, 0) {
			return Forecast{}, fmt.Errorf("forecast: rate %v: %w", r, ErrInvalidRate)
		}
	}
	if backlog < 0 {
		return Forecast{}, fmt.Errorf("forecast: backlog %d: %w", backlog, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	switch {
	case backlog == 0:
	case capacity <= arrival:
		f.Never = true
	default:
		secs := float64(backlog) / (capacity - arrival)
		if secs >= float64(math.MaxInt64)/float64(time.Second) {
			f.Recovery = math.MaxInt64
		} else {
			f.Recovery = time.Duration(math.Round(secs * float64(time.Second)))
		}
	}
	return f, nil
}
