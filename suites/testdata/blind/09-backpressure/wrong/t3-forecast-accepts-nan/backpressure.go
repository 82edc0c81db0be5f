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

// Queue is a bounded admission queue. The waiting jobs live in a ring
// buffer of exactly Capacity slots, which never grows; waiting Submits learn
// that a place was freed from a broadcast channel that is closed and
// replaced on every change.
type Queue struct {
	capacity    int
	tenantLimit int
	maxWait     time.Duration
	claimer     Claimer

	mu       sync.Mutex
	ring     []Admitted // ring[head], ..., ring[(head+n-1)%cap]
	head, n  int
	reserved int            // places reserved by Submits still claiming
	tenants  map[string]int // waiting + reserved, per tenant
	inFlight map[Ticket]Admitted
	nextTkt  Ticket
	changed  chan struct{}

	rejected, completed     int64
	lastLatency, maxLatency time.Duration
}

// New returns an empty queue with the documented defaults applied.
func New(opts Options) *Queue {
	c := opts.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	tl := opts.TenantLimit
	if tl <= 0 {
		tl = max(c/4, 1)
	}
	if tl > c {
		tl = c
	}
	return &Queue{
		capacity: c, tenantLimit: tl, maxWait: max(opts.MaxWait, 0), claimer: opts.Claimer,
		ring: make([]Admitted, c), tenants: map[string]int{}, inFlight: map[Ticket]Admitted{},
		changed: make(chan struct{}),
	}
}

// broadcast wakes every waiting Submit. q.mu is held.
func (q *Queue) broadcast() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// tryReserve reserves a place for tenant, or says why it cannot. q.mu is held.
func (q *Queue) tryReserve(tenant string) error {
	if q.n+q.reserved >= q.capacity {
		return ErrQueueFull
	}
	if q.tenants[tenant] >= q.tenantLimit {
		return ErrTenantFull
	}
	q.reserved++
	q.tenants[tenant]++
	return nil
}

func (q *Queue) release(tenant string) {
	q.tenants[tenant]--
	if q.tenants[tenant] == 0 {
		delete(q.tenants, tenant)
	}
}

// Submit admits job for tenant under key: admission, then the claim, then
// the queue.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("submit %s/%s: %w", tenant, key, err)
	}
	var deadline <-chan time.Time
	if q.maxWait > 0 {
		t := time.NewTimer(q.maxWait) // counted from this Submit's start, once
		defer t.Stop()
		deadline = t.C
	}
	q.mu.Lock()
	for {
		why := q.tryReserve(tenant)
		if why == nil {
			break
		}
		if deadline == nil {
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("submit %s/%s: %w", tenant, key, why)
		}
		wake := q.changed
		q.mu.Unlock()
		select {
		case <-wake:
			q.mu.Lock()
		case <-deadline:
			q.mu.Lock()
			if why = q.tryReserve(tenant); why == nil {
				break
			}
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("submit %s/%s: waited %v: %w", tenant, key, q.maxWait, why)
		case <-ctx.Done():
			return fmt.Errorf("submit %s/%s: waiting for room: %w", tenant, key, ctx.Err())
		}
		if why == nil {
			break
		}
	}
	q.mu.Unlock()

	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.reserved--
			q.release(tenant)
			q.broadcast()
			q.mu.Unlock()
			return fmt.Errorf("submit %s/%s: claim: %w", tenant, key, err)
		}
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.ring[(q.head+q.n)%q.capacity] = Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()}
	q.n++
	return nil
}

// Take hands out the oldest waiting job with a new ticket.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return Admitted{}, fmt.Errorf("take: %w", ErrQueueEmpty)
	}
	a := q.ring[q.head]
	q.ring[q.head] = Admitted{}
	q.head = (q.head + 1) % q.capacity
	q.n--
	q.release(a.Tenant)
	q.nextTkt++
	a.Ticket = q.nextTkt
	q.inFlight[a.Ticket] = a
	q.broadcast()
	return a, nil
}

// Done reports that the job of ticket is finished.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("done %d: %w", ticket, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	a, ok := q.inFlight[ticket]
	if !ok {
		return fmt.Errorf("done %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.inFlight, ticket)
	lat := time.Since(a.Enqueued)
	q.completed++
	q.lastLatency = lat
	if lat > q.maxLatency {
		q.maxLatency = lat
	}
	return nil
}

// Stats reports the queue now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{
		Depth: q.n, InFlight: len(q.inFlight), Rejected: q.rejected, Completed: q.completed,
		LastLatency: q.lastLatency, MaxLatency: q.maxLatency,
	}
	if q.n > 0 {
		s.OldestAge = time.Since(q.ring[q.head].Enqueued)
	}
	return s
}

// ForecastBacklog says what becomes of a backlog.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	bad := func(x float64) bool { return x < 0 }
	if backlog < 0 || bad(arrival) || bad(capacity) {
		return Forecast{}, fmt.Errorf("forecast backlog %d, arrival %g, capacity %g: %w", backlog, arrival, capacity, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	if backlog == 0 {
		return f, nil
	}
	if capacity <= arrival {
		f.Never = true
		return f, nil
	}
	ns := float64(backlog) / (capacity - arrival) * float64(time.Second)
	if ns >= float64(math.MaxInt64) || math.IsInf(ns, 1) {
		f.Recovery = time.Duration(math.MaxInt64)
	} else {
		f.Recovery = time.Duration(ns)
	}
	return f, nil
}
