package task

// Bounded admission and backlog arithmetic (lab 09): a queue that admits a
// job only when it has room for it, before the job's idempotency key is
// claimed, gives each tenant a bounded share, and reports how long its
// oldest job has waited; and the arithmetic that says whether a backlog
// drains, and when. The capstone's engine puts this queue in front of its
// workers.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultQueueCapacity is how many jobs an admission queue holds waiting
// when AdmissionOptions.Capacity is zero or negative.
const DefaultQueueCapacity = 1000

// The errors of an admission queue and of the backlog arithmetic, matched
// with errors.Is.
var (
	// ErrQueueFull means a job was refused because the queue had no room
	// for it: every place was taken, or the tenant's share was (see
	// ErrTenantFull, which wraps it). Nothing was queued and nothing was
	// claimed; the caller may try again later with the same key.
	ErrQueueFull = errors.New("queue full")

	// ErrTenantFull means a job was refused because its tenant already had
	// its whole share of the queue waiting, while the queue itself had
	// room for other tenants. It wraps ErrQueueFull.
	ErrTenantFull = fmt.Errorf("tenant's share of the queue is full: %w", ErrQueueFull)

	// ErrQueueEmpty means Take found no job waiting.
	ErrQueueEmpty = errors.New("no job waiting")

	// ErrUnknownTicket means Done was given a ticket that no Take handed
	// out, or one that is already done.
	ErrUnknownTicket = errors.New("unknown ticket")

	// ErrInvalidRate means the backlog arithmetic was given a negative
	// backlog, or a rate that is negative, NaN or infinite.
	ErrInvalidRate = errors.New("invalid backlog or rate")
)

// KeyClaimer claims idempotency keys, as lab 01's store does: Claim
// returns nil when this caller now holds the key, and an error when it
// does not (someone holds it already, or the store failed). An admission
// queue calls it only for a job it has room for.
type KeyClaimer interface {
	Claim(ctx context.Context, tenant, key string) error
}

// AdmissionOptions configure an admission queue.
type AdmissionOptions struct {
	// Capacity is how many jobs the queue holds waiting, at most. Zero or
	// less means DefaultQueueCapacity.
	Capacity int

	// TenantLimit is how many of those jobs one tenant may have waiting,
	// at most. Zero or less means a quarter of the capacity (at least 1);
	// more than the capacity means the capacity.
	TenantLimit int

	// MaxWait is how long Submit waits for room when there is none. Zero
	// or less means it does not wait: a job that finds no room is refused
	// at once.
	MaxWait time.Duration

	// Claimer, when not nil, is called by Submit for each job it admits,
	// after the job's room is reserved and before it is queued. Nil means
	// the jobs' keys are not claimed.
	Claimer KeyClaimer
}

// Ticket identifies one job handed out by Take, for its Done. It is never
// zero, and no two Takes hand out the same ticket.
type Ticket uint64

// Admitted is a job that was admitted to the queue, as Take hands it out.
type Admitted struct {
	Ticket Ticket
	Tenant string
	Key    string
	Job    Task

	// Enqueued is when the job entered the queue (after its key was
	// claimed): its age and its completion latency are measured from it.
	Enqueued time.Time
}

// String renders the admitted job for timelines: "acme/key-1 (ticket 3)".
func (a Admitted) String() string {
	return fmt.Sprintf("%s/%s (ticket %d)", a.Tenant, a.Key, a.Ticket)
}

// AdmissionStats is what an admission queue reports about itself.
type AdmissionStats struct {
	// Depth is the number of jobs waiting: admitted and not taken yet.
	Depth int

	// InFlight is the number of jobs taken and not done yet.
	InFlight int

	// OldestAge is how long the oldest waiting job has waited (now minus
	// its Enqueued); zero when no job waits. Jobs taken do not count.
	OldestAge time.Duration

	// Rejected counts the Submits that returned ErrQueueFull (or
	// ErrTenantFull) since the queue was built.
	Rejected int64

	// Completed counts the jobs done since the queue was built.
	Completed int64

	// LastLatency is the completion latency (from Enqueued to Done) of
	// the job done last; zero before any.
	LastLatency time.Duration

	// MaxLatency is the longest completion latency of any job done since
	// the queue was built; zero before any.
	MaxLatency time.Duration
}

// String renders the stats for timelines.
func (s AdmissionStats) String() string {
	return fmt.Sprintf("depth %d, in flight %d, oldest age %v, rejected %d, completed %d, last latency %v, max latency %v",
		s.Depth, s.InFlight, s.OldestAge, s.Rejected, s.Completed, s.LastLatency, s.MaxLatency)
}

// AdmissionQueue is a bounded admission queue, as its producers, workers
// and dashboards use it. Every method is safe for concurrent use.
type AdmissionQueue interface {
	// Submit admits job for tenant under its idempotency key, or refuses
	// it (ErrQueueFull, ErrTenantFull) without claiming the key.
	Submit(ctx context.Context, tenant, key string, job Task) error

	// Take hands out the oldest waiting job, or returns ErrQueueEmpty.
	Take(ctx context.Context) (Admitted, error)

	// Done reports that the job of ticket is finished.
	Done(ctx context.Context, ticket Ticket) error

	// Stats reports the queue's depth, oldest age and latencies now.
	Stats() AdmissionStats
}

// BacklogForecast is what the backlog arithmetic says about a backlog
// under steady arrival and processing rates.
type BacklogForecast struct {
	// Growth is how fast the backlog grows, in jobs per second: the
	// arrival rate minus the processing capacity. Negative means it
	// drains.
	Growth float64

	// Recovery is how long the backlog takes to drain: backlog divided by
	// (capacity minus arrival). It is zero for an empty backlog, and zero
	// when Never is set; it is never negative, and one longer than the
	// longest time.Duration (about 292 years) is that longest Duration.
	Recovery time.Duration

	// Never is set when the backlog is not empty and the capacity is not
	// above the arrival rate: it never drains.
	Never bool
}

// String renders the forecast: "grows by -20 jobs/s, drains in 10m0s".
func (f BacklogForecast) String() string {
	if f.Never {
		return fmt.Sprintf("grows by %g jobs/s, never drains", f.Growth)
	}
	return fmt.Sprintf("grows by %g jobs/s, drains in %v", f.Growth, f.Recovery)
}
