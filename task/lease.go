package task

// Leases and visibility timeouts (lab 05), written so that the later labs
// grow them instead of replacing them: lab 06 adds a fencing number beside
// the opaque Token (a type that embeds Lease), lab 07 counts deliveries with
// Attempt, and the capstone's queue is a LeaseQueue with more behind it.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The visibility timeouts a lease queue accepts, after Amazon SQS: a lease
// lasts DefaultVisibilityTimeout unless the queue is configured otherwise,
// and no lease, renewal or delay is ever longer than MaxVisibilityTimeout.
const (
	DefaultVisibilityTimeout = 30 * time.Second
	MaxVisibilityTimeout     = 12 * time.Hour
)

// The errors of a lease queue, matched with errors.Is.
var (
	// ErrNoTask means no task is visible right now: the queue is empty, or
	// every task in it is leased or delayed.
	ErrNoTask = errors.New("no visible task")

	// ErrLeaseLost means the token is not the current lease of a task any
	// more, or never was: the lease expired (even if nobody has leased the
	// task again), the task was leased again, acknowledged or released. Its
	// holder must stop working on the task; it is someone else's now.
	ErrLeaseLost = errors.New("lease lost")

	// ErrInvalidDuration means a visibility timeout, renewal or delay is
	// out of range (negative, or longer than MaxVisibilityTimeout).
	ErrInvalidDuration = errors.New("invalid duration")

	// ErrInvalidTask means a task cannot be queued: it has no ID.
	ErrInvalidTask = errors.New("invalid task")

	// ErrDuplicateTask means a task with the same ID is already in the
	// queue (not yet acknowledged).
	ErrDuplicateTask = errors.New("duplicate task")
)

// LeaseToken is the receipt of one delivery of a task, like an SQS receipt
// handle: the queue makes up a new one for every delivery, and only the
// current one acknowledges, releases or renews the task. It is opaque: its
// holder may compare two tokens for equality and nothing else.
type LeaseToken string

// Lease is one delivery of a task to one worker: the task is invisible to
// every other worker until Expires, unless its holder renews the lease, and
// comes back by itself when the lease ends without an acknowledgement.
type Lease struct {
	Task Task

	// Token is this delivery's receipt, different from every other
	// delivery's, of this task or any other.
	Token LeaseToken

	// Holder is the name of the worker the task was leased to.
	Holder string

	// Attempt counts the deliveries of this task: 1 for the first lease,
	// 2 for the next one (after an expiry or a release), and so on.
	Attempt int

	// Expires is when the lease ends unless it is renewed. The lease
	// holds while the queue's clock is before Expires; at Expires the
	// task is visible again.
	Expires time.Time
}

// String renders the lease for timelines: "task-1 to w1 (attempt 2)".
func (l Lease) String() string {
	return fmt.Sprintf("%s to %s (attempt %d)", l.Task.ID, l.Holder, l.Attempt)
}

// LeaseQueue is the consumer side of a lease queue: what a worker calls.
// Every method is safe for concurrent use, never waits for a task to appear,
// and returns an error wrapping ctx.Err() when ctx is done.
type LeaseQueue interface {
	// Lease leases one visible task to holder for the queue's visibility
	// timeout, or returns ErrNoTask.
	Lease(ctx context.Context, holder string) (Lease, error)

	// Extend makes the lease of token end d after now, like SQS's
	// ChangeMessageVisibility, and returns the renewed lease; ErrLeaseLost
	// when token is not a current lease.
	Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error)

	// Ack acknowledges the delivery of token: the task leaves the queue
	// for good. ErrLeaseLost when token is not a current lease.
	Ack(ctx context.Context, token LeaseToken) error

	// Nack ends the lease of token and makes its task visible again delay
	// after now (zero: at once). ErrLeaseLost when token is not a current
	// lease.
	Nack(ctx context.Context, token LeaseToken, delay time.Duration) error
}

// QueueOptions configure a lease queue.
type QueueOptions struct {
	// VisibilityTimeout is how long a lease lasts from the Lease call that
	// grants it. Zero means DefaultVisibilityTimeout; more than
	// MaxVisibilityTimeout, or less than zero, is ErrInvalidDuration.
	VisibilityTimeout time.Duration
}

// Handler works on one leased task. Its ctx is cancelled when the lease is
// lost or about to be: work must stop then. A nil error means the task's
// outcome is durable and the task may leave the queue.
type Handler func(ctx context.Context, l Lease) error

// WorkerOptions configure a worker that takes tasks from a LeaseQueue.
type WorkerOptions struct {
	// Name is the worker's name, the holder of its leases ("w1").
	Name string

	// Capacity is how many tasks the worker works on at once, and so how
	// many leases it holds at most. Zero or less means 1.
	Capacity int

	// PollInterval is how long the worker waits before asking again when
	// the queue has no visible task. Zero or less means one second.
	PollInterval time.Duration

	// Backoff is the delay before a failed task is visible again, given
	// the attempt that failed (the Attempt of the lease whose handler
	// returned an error): the worker releases the task with
	// Nack(token, Backoff(attempt)). Nil means release at once,
	// Nack(token, 0). Production passes full-jitter exponential backoff
	// (see docs/04-retry.md), so that a task failing against a dependency
	// that is down does not come back, and fail again, as fast as the
	// workers can go.
	Backoff func(attempt int) time.Duration
}
