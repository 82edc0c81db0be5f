// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
//
// This design: one mutex; the waiting jobs in a fixed ring of Capacity
// slots; a "changed" channel that is closed and replaced whenever a place is
// freed, so every waiting Submit wakes, looks again with its own deadline,
// and only the ones with room go on.
package backpressure

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

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

// Queue is a bounded admission queue. It must be safe for concurrent use.
// Build it with New.
type Queue struct {
	capacity int
	limit    int
	maxWait  time.Duration
	claimer  Claimer

	mu       sync.Mutex
	changed  chan struct{} // closed (and replaced) when a place is freed
	ring     []Admitted    // the waiting jobs, head first
	head     int
	depth    int
	used     int            // places taken: waiting jobs and reservations
	tenants  map[string]int // per tenant: waiting jobs and reservations
	inFlight map[Ticket]Admitted
	ticket   Ticket
	rejected int64
	done     int64
	last     time.Duration
	longest  time.Duration
}

// New returns an empty queue.
func New(opts Options) *Queue {
	c := opts.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	l := opts.TenantLimit
	if l <= 0 {
		l = max(c/4, 1)
	}
	l = min(l, c)
	return &Queue{
		capacity: c, limit: l, maxWait: max(opts.MaxWait, 0), claimer: opts.Claimer,
		changed: make(chan struct{}), ring: make([]Admitted, c),
		tenants: map[string]int{}, inFlight: map[Ticket]Admitted{},
	}
}

// roomLocked says why tenant has no place, or nil.
func (q *Queue) roomLocked(tenant string) error {
	if q.used >= q.capacity {
		return ErrQueueFull
	}
	if q.tenants[tenant] >= q.limit {
		return ErrTenantFull
	}
	return nil
}

// freeLocked gives back one place of tenant and wakes every waiter.
func (q *Queue) freeLocked(tenant string) {
	q.used--
	if q.tenants[tenant]--; q.tenants[tenant] == 0 {
		delete(q.tenants, tenant)
	}
	close(q.changed)
	q.changed = make(chan struct{})
}

// Submit admits job for tenant under the idempotency key: admission, then
// the claim, then the queue.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: submit %s/%s: %w", tenant, key, err)
	}
	var expired <-chan time.Time
	if q.maxWait > 0 {
		t := time.NewTimer(q.maxWait)
		defer t.Stop()
		expired = t.C
	}
	q.mu.Lock()
	for {
		why := q.roomLocked(tenant)
		if why == nil {
			break
		}
		if expired == nil {
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("backpressure: submit %s/%s: %w", tenant, key, why)
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
			q.mu.Lock()
		case <-ctx.Done():
			return fmt.Errorf("backpressure: submit %s/%s while waiting for room: %w", tenant, key, ctx.Err())
		case <-expired:
			q.mu.Lock()
			why := q.roomLocked(tenant)
			if why == nil {
				why = ErrQueueFull // room came at the very instant MaxWait ran out: still refused
			}
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("backpressure: submit %s/%s: no room within %v: %w", tenant, key, q.maxWait, why)
		}
	}
	q.used++
	q.tenants[tenant]++
	q.mu.Unlock()

	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.freeLocked(tenant)
			q.mu.Unlock()
			return fmt.Errorf("backpressure: claim %s/%s: %w", tenant, key, err)
		}
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	q.ring[(q.head+q.depth)%q.capacity] = Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()}
	q.depth++
	return nil
}

// Take hands out the oldest waiting job with a new ticket, or returns an
// error wrapping ErrQueueEmpty when none waits.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.depth == 0 {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", ErrQueueEmpty)
	}
	a := q.ring[q.head]
	q.ring[q.head] = Admitted{}
	q.head = (q.head + 1) % q.capacity
	q.depth--
	q.ticket++
	a.Ticket = q.ticket
	q.inFlight[a.Ticket] = a
	q.freeLocked(a.Tenant)
	return a, nil
}

// Done reports that the job of ticket is finished, and records its
// completion latency.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: done %d: %w", ticket, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	a, ok := q.inFlight[ticket]
	if !ok {
		return fmt.Errorf("backpressure: done %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.inFlight, ticket)
	lat := time.Since(a.Enqueued)
	q.done++
	if lat > q.last {
		q.longest = lat
	}
	q.last = lat
	return nil
}

// Stats reports the queue now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{Depth: q.depth, InFlight: len(q.inFlight), Rejected: q.rejected, Completed: q.done, LastLatency: q.last, MaxLatency: q.longest}
	if q.depth > 0 {
		s.OldestAge = time.Since(q.ring[q.head].Enqueued)
	}
	return s
}

func badRate(r float64) bool { return r < 0 || math.IsNaN(r) || math.IsInf(r, 0) }

// ForecastBacklog says what becomes of a backlog of jobs.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	if backlog < 0 || badRate(arrival) || badRate(capacity) {
		return Forecast{}, fmt.Errorf("backpressure: forecast %d jobs at %g/s against %g/s: %w", backlog, arrival, capacity, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	switch {
	case backlog == 0:
	case capacity <= arrival:
		f.Never = true
	default:
		// backlog * 1e9 / (capacity - arrival) nanoseconds, in exact-enough
		// big arithmetic: float64 has no nanosecond precision near 2^63 ns.
		const prec = 2200 // holds capacity - arrival exactly for any two float64s
		diff := new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetFloat64(capacity), new(big.Float).SetPrec(prec).SetFloat64(arrival))
		ns := new(big.Float).SetPrec(prec).SetInt64(int64(backlog))
		ns.Mul(ns, new(big.Float).SetPrec(prec).SetInt64(int64(time.Second)))
		ns.Quo(ns, diff)
		ns.Add(ns, big.NewFloat(0.5)) // round to the nearest nanosecond
		n, _ := ns.Int64()            // MaxInt64 when longer than the longest Duration
		f.Recovery = time.Duration(n)
	}
	return f, nil
}
