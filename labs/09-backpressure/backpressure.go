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
	"errors"

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

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// the queue works.
var ErrNotImplemented = errors.New("backpressure: not implemented yet (TODO in labs/09-backpressure/backpressure.go)")

// Queue is a bounded admission queue. It must be safe for concurrent use.
// Build it with New.
type Queue struct {
	// TODO: the options (with their defaults applied), the waiting jobs
	// in a buffer that never grows past the capacity, each tenant's count,
	// the jobs in flight, the counters and latencies, and whatever keeps
	// concurrent callers safe and lets a waiting Submit learn that a place
	// was freed.
}

// New returns an empty queue. opts.Capacity zero or less means
// DefaultCapacity; opts.TenantLimit zero or less means a quarter of the
// capacity (at least 1), and more than the capacity means the capacity;
// opts.MaxWait zero or less means a Submit that finds no room is refused at
// once. opts.Claimer, when not nil, is called for each job admitted.
func New(opts Options) *Queue {
	// TODO: implement. Start with the README's "What to implement".
	return &Queue{}
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
// A refused Submit has claimed nothing. A job whose key was claimed is
// queued, even if ctx is done by then.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	return ErrNotImplemented
}

// Take hands out the oldest waiting job with a new ticket, or returns an
// error wrapping ErrQueueEmpty when none waits. Taking it frees its place
// in the queue and in its tenant's share.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	return Admitted{}, ErrNotImplemented
}

// Done reports that the job of ticket is finished, and records its
// completion latency: from the moment it was queued to now. A ticket that
// Take did not hand out, or that is done already, is an error wrapping
// ErrUnknownTicket.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	return ErrNotImplemented
}

// Stats reports the queue now: its depth, the jobs in flight, the age of
// its oldest waiting job, and the counts and latencies since New.
func (q *Queue) Stats() Stats {
	// TODO: implement.
	return Stats{}
}

// ForecastBacklog says what becomes of a backlog of jobs when jobs keep
// arriving at arrival per second and the workers finish capacity per
// second. Growth is arrival minus capacity. Recovery, the time to drain the
// backlog, is backlog / (capacity - arrival) seconds: zero for an empty
// backlog, and Never when the capacity is not above the arrival rate. A
// recovery longer than the longest time.Duration is that longest Duration.
// A negative backlog, or a rate that is negative, NaN or infinite, is an
// error wrapping ErrInvalidRate.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	// TODO: implement.
	return Forecast{}, ErrNotImplemented
}
