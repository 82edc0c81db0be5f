// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
//
// This is the reference solution of lab 09. A queue absorbs a burst; it
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

// Queue is a bounded admission queue, safe for concurrent use. Build it
// with New.
//
// The waiting jobs live in a ring buffer allocated once, at New, with room
// for exactly Capacity jobs: however many jobs are offered, the queue never
// holds more. A Submit reserves its place (in the queue and in its
// tenant's share) under the lock, claims the key without the lock, and
// queues the job into the place it reserved: so the claim store may be
// slow without stalling anyone else, and concurrent Submits can never
// overbook the queue.
type Queue struct {
	capacity    int
	tenantLimit int
	maxWait     time.Duration
	claimer     Claimer

	mu       sync.Mutex
	ring     []Admitted           // the waiting jobs: ring[head], ring[head+1], ... (mod capacity)
	head     int                  // index of the oldest waiting job
	n        int                  // number of waiting jobs
	reserved int                  // places reserved by Submits that are claiming their key
	tenants  map[string]int       // per tenant: waiting jobs plus reserved places; no entry at zero
	inFlight map[Ticket]time.Time // taken jobs not done yet, with their Enqueued
	room     chan struct{}        // closed (and replaced) whenever a place is freed
	tickets  Ticket               // the last ticket handed out
	stats    Stats                // Rejected, Completed and the latencies
}

// New returns an empty queue. opts.Capacity zero or less means
// DefaultCapacity; opts.TenantLimit zero or less means a quarter of the
// capacity (at least 1), and more than the capacity means the capacity;
// opts.MaxWait zero or less means a Submit that finds no room is refused at
// once. opts.Claimer, when not nil, is called for each job admitted.
func New(opts Options) *Queue {
	capacity := opts.Capacity
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	limit := opts.TenantLimit
	if limit <= 0 {
		limit = max(1, capacity/4)
	}
	return &Queue{
		capacity:    capacity,
		tenantLimit: min(limit, capacity),
		maxWait:     opts.MaxWait,
		claimer:     opts.Claimer,
		ring:        make([]Admitted, capacity),
		tenants:     map[string]int{},
		inFlight:    map[Ticket]time.Time{},
		room:        make(chan struct{}),
	}
}

// Submit admits job for tenant under the idempotency key, in three steps:
//
//  1. admission: it reserves a place for the job in the queue and in the
//     tenant's share. With no place free it refuses the job with an error
//     wrapping ErrQueueFull (ErrTenantFull when only the tenant's share is
//     full), at once, or, when MaxWait is set, after waiting for room until
//     MaxWait has passed or ctx is done, whichever comes first (then the
//     error wraps ctx.Err(), and not ErrQueueFull; on a tie between MaxWait
//     and ctx's deadline, ctx's deadline wins);
//  2. the claim: only then does it claim the key with the Claimer. A claim
//     that fails gives the place back and returns the claimer's error
//     wrapped;
//  3. it queues the job in the place it reserved.
//
// A refused Submit has claimed nothing, so the client's retry with the same
// key is not mistaken for a duplicate. A job whose key was claimed is
// queued, even if ctx is done by then: dropping it would leave its key
// claimed by a job that never runs.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: submit %s/%s: %w", tenant, key, err)
	}
	if err := q.admit(ctx, tenant); err != nil {
		return fmt.Errorf("backpressure: submit %s/%s: %w", tenant, key, err)
	}
	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.unreserve(tenant)
			q.mu.Unlock()
			return fmt.Errorf("backpressure: submit %s/%s: claim: %w", tenant, key, err)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved--
	q.ring[(q.head+q.n)%q.capacity] = Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()}
	q.n++
	return nil
}

// admit reserves a place for one job of tenant, waiting for one as long as
// MaxWait and ctx allow. It returns ErrQueueFull, ErrTenantFull or ctx's
// error when it could not.
func (q *Queue) admit(ctx context.Context, tenant string) error {
	var timeout <-chan time.Time
	if deadlineFirst(ctx, q.maxWait) {
		timeout = make(chan time.Time) // never fires: ctx.Done() ends the wait
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		err := q.noRoom(tenant)
		if err == nil {
			q.reserved++
			q.tenants[tenant]++
			return nil
		}
		if q.maxWait <= 0 {
			q.stats.Rejected++
			return err // shed: refuse at once
		}
		if timeout == nil {
			t := time.NewTimer(q.maxWait)
			defer t.Stop()
			timeout = t.C
		}
		// Wait without holding the lock (and without any place reserved)
		// until a place is freed, MaxWait passes or ctx is done.
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
			q.mu.Lock()
		case <-timeout:
			q.mu.Lock()
			if err := q.noRoom(tenant); err != nil {
				q.stats.Rejected++
				return err
			}
			timeout = nil // room appeared at the last instant: take it
		case <-ctx.Done():
			q.mu.Lock()
			return ctx.Err()
		}
	}
}

// deadlineFirst reports whether ctx's deadline comes at or before the end
// of a wait of maxWait starting now. Then the context alone ends the wait,
// and when the two fall on the same instant its error wins: with a timer
// for each, the outcome would be select's random choice between two ready
// channels.
func deadlineFirst(ctx context.Context, maxWait time.Duration) bool {
	d, ok := ctx.Deadline()
	return ok && !d.After(time.Now().Add(maxWait))
}

// noRoom says why a job of tenant cannot be admitted now, or nil when it
// can. Reserved places count: they belong to Submits claiming their keys.
// q.mu is held.
func (q *Queue) noRoom(tenant string) error {
	switch {
	case q.n+q.reserved >= q.capacity:
		return ErrQueueFull
	case q.tenants[tenant] >= q.tenantLimit:
		return ErrTenantFull
	}
	return nil
}

// unreserve gives back a place reserved for a job of tenant. q.mu is held.
func (q *Queue) unreserve(tenant string) {
	q.reserved--
	q.release(tenant)
}

// release frees one place of tenant's share, and wakes the Submits waiting
// for room. q.mu is held.
func (q *Queue) release(tenant string) {
	// Delete a tenant's count at zero, so that the map holds at most one
	// entry per job in the queue, however many tenants ever submitted.
	if q.tenants[tenant]--; q.tenants[tenant] <= 0 {
		delete(q.tenants, tenant)
	}
	close(q.room)
	q.room = make(chan struct{})
}

// Take hands out the oldest waiting job with a new ticket, or returns an
// error wrapping ErrQueueEmpty when none waits. Taking it frees its place
// in the queue and in its tenant's share.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", ErrQueueEmpty)
	}
	a := q.ring[q.head]
	q.ring[q.head] = Admitted{} // let the job's memory go
	q.head = (q.head + 1) % q.capacity
	q.n--
	q.tickets++
	a.Ticket = q.tickets
	q.inFlight[a.Ticket] = a.Enqueued
	q.release(a.Tenant)
	return a, nil
}

// Done reports that the job of ticket is finished, and records its
// completion latency: from the moment it was queued to now, the time its
// producer waited for it. A ticket that Take did not hand out, or that is
// done already, is an error wrapping ErrUnknownTicket.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: done %d: %w", ticket, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enqueued, ok := q.inFlight[ticket]
	if !ok {
		return fmt.Errorf("backpressure: done %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.inFlight, ticket)
	latency := time.Since(enqueued)
	q.stats.Completed++
	q.stats.LastLatency = latency
	q.stats.MaxLatency = max(q.stats.MaxLatency, latency)
	return nil
}

// Stats reports the queue now: its depth, the jobs in flight, the age of
// its oldest waiting job, and the counts and latencies since New.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.stats
	s.Depth = q.n
	s.InFlight = len(q.inFlight)
	if q.n > 0 {
		s.OldestAge = time.Since(q.ring[q.head].Enqueued)
	}
	return s
}

// ForecastBacklog says what becomes of a backlog of jobs when jobs keep
// arriving at arrival per second and the workers finish capacity per
// second. Growth is arrival minus capacity. Recovery, the time to drain the
// backlog, is backlog / (capacity - arrival) seconds: zero for an empty
// backlog, and Never when the capacity is not above the arrival rate (the
// backlog stays or grows). A recovery longer than the longest
// time.Duration is that longest Duration. A negative backlog, or a rate
// that is negative, NaN or infinite, is an error wrapping ErrInvalidRate.
//
// The course's example: 12,000 jobs, 80 arriving and 100 done per second:
// 20 per second drain the backlog, in 12,000 / 20 = 600 seconds.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	if backlog < 0 || !validRate(arrival) || !validRate(capacity) {
		return Forecast{}, fmt.Errorf("backpressure: forecast backlog %d, arrival %v/s, capacity %v/s: %w", backlog, arrival, capacity, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	switch {
	case backlog == 0:
		return f, nil // nothing to drain, whatever the rates
	case capacity <= arrival:
		f.Never = true // the backlog stays or grows: no division by zero or below
		return f, nil
	}
	ns := float64(backlog) / (capacity - arrival) * float64(time.Second)
	// float64(math.MaxInt64) is 2^63: a float at or above it does not fit
	// a Duration (converting it would give a negative number).
	if ns >= float64(math.MaxInt64) {
		f.Recovery = time.Duration(math.MaxInt64)
		return f, nil
	}
	f.Recovery = time.Duration(math.Round(ns))
	return f, nil
}

// validRate reports whether r is a rate: finite and not negative. NaN
// fails the comparison.
func validRate(r float64) bool {
	return r >= 0 && !math.IsInf(r, 1)
}
