// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
//
// A correct alternative: one mutex, one sync.Cond, a slice as the FIFO. A queue absorbs a burst; it
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

// Queue is a bounded admission queue, safe for concurrent use: one mutex,
// one sync.Cond that every freed place (and every deadline) broadcasts on,
// and a plain slice used as the FIFO of waiting jobs.
type Queue struct {
	capacity, limit int
	maxWait         time.Duration
	claimer         Claimer

	mu       sync.Mutex
	cond     *sync.Cond
	jobs     []Admitted // waiting, oldest first
	used     int        // places taken: waiting jobs plus reservations
	perT     map[string]int
	flying   map[Ticket]time.Time
	last     Ticket
	rejected int64
	done     int64
	lastLat  time.Duration
	maxLat   time.Duration
}

// New returns an empty queue with the documented defaults applied.
func New(opts Options) *Queue {
	q := &Queue{capacity: opts.Capacity, limit: opts.TenantLimit, maxWait: opts.MaxWait, claimer: opts.Claimer}
	if q.capacity < 1 {
		q.capacity = DefaultCapacity
	}
	if q.limit < 1 {
		q.limit = q.capacity / 4
		if q.limit < 1 {
			q.limit = 1
		}
	}
	if q.limit > q.capacity {
		q.limit = q.capacity
	}
	q.cond = sync.NewCond(&q.mu)
	q.jobs = make([]Admitted, 0, q.capacity)
	q.perT = make(map[string]int)
	q.flying = make(map[Ticket]time.Time)
	return q
}

func (q *Queue) wakeAll() {
	q.mu.Lock()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// Submit reserves a place, claims the key without the lock, then queues.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if ctx.Err() != nil {
		return fmt.Errorf("submit: %w", ctx.Err())
	}
	q.mu.Lock()
	var deadline time.Time
	for {
		var full error
		if q.used >= q.capacity {
			full = ErrQueueFull
		} else if q.perT[tenant] >= q.limit {
			full = ErrTenantFull
		}
		if full == nil {
			break
		}
		if q.maxWait <= 0 {
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("submit: %w", full)
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(q.maxWait)
			t := time.AfterFunc(q.maxWait, q.wakeAll)
			defer t.Stop()
			stop := context.AfterFunc(ctx, q.wakeAll)
			defer stop()
		} else if err := ctxDone(ctx); err != nil {
			q.mu.Unlock()
			return fmt.Errorf("submit: %w", err)
		} else if !time.Now().Before(deadline) {
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("submit: waited %v: %w", q.maxWait, full)
		}
		q.cond.Wait()
	}
	q.used++
	q.perT[tenant]++
	q.mu.Unlock()

	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.giveBack(tenant)
			q.mu.Unlock()
			return fmt.Errorf("submit: claim %s/%s: %w", tenant, key, err)
		}
	}
	q.mu.Lock()
	q.jobs = append(q.jobs, Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()})
	q.mu.Unlock()
	return nil
}

// ctxDone returns ctx's error, or context.DeadlineExceeded once its
// deadline has passed even if its own timer has not cancelled it yet: when
// MaxWait ends at the same instant, the context's deadline wins.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// giveBack frees a place of tenant. q.mu is held.
func (q *Queue) giveBack(tenant string) {
	q.used--
	q.perT[tenant]--
	if q.perT[tenant] == 0 {
		delete(q.perT, tenant)
	}
	q.cond.Broadcast()
}

// Take hands out the oldest waiting job.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if ctx.Err() != nil {
		return Admitted{}, fmt.Errorf("take: %w", ctx.Err())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return Admitted{}, fmt.Errorf("take: %w", ErrQueueEmpty)
	}
	a := q.jobs[0]
	q.jobs[0] = Admitted{}
	q.jobs = q.jobs[1:]
	if len(q.jobs) == 0 {
		q.jobs = q.jobs[:0:0] // start the slice afresh, without growing it
	}
	q.last++
	a.Ticket = q.last
	q.flying[a.Ticket] = a.Enqueued
	q.giveBack(a.Tenant)
	return a, nil
}

// Done records the job's completion latency.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if ctx.Err() != nil {
		return fmt.Errorf("done: %w", ctx.Err())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.flying[ticket]
	if !ok {
		return fmt.Errorf("done %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.flying, ticket)
	lat := time.Now().Sub(enq)
	q.done++
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
	s := Stats{Depth: len(q.jobs), InFlight: len(q.flying), Rejected: q.rejected, Completed: q.done, LastLatency: q.lastLat, MaxLatency: q.maxLat}
	if len(q.jobs) > 0 {
		s.OldestAge = time.Now().Sub(q.jobs[0].Enqueued)
	}
	return s
}

// ForecastBacklog computes growth and recovery, special cases first.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	bad := func(r float64) bool { return math.IsNaN(r) || math.IsInf(r, 0) || r < 0 }
	if backlog < 0 || bad(arrival) || bad(capacity) {
		return Forecast{}, fmt.Errorf("forecast: %w", ErrInvalidRate)
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
	if ns >= 1<<63 {
		f.Recovery = math.MaxInt64
	} else {
		f.Recovery = time.Duration(math.Round(ns))
	}
	return f, nil
}
