// Package lease is a task queue with lease-based checkout and visibility
// timeouts, and a worker that takes tasks from it only as fast as it can
// work on them.
//
// Lab 05: lease-based checkout with visibility timeouts. Read README.md in
// this directory first, then make `go run ./cmd/labctl check 5` pass.
//
// The scenario: workers take tasks from a shared queue. A worker can die at
// any moment, or stall for minutes in a garbage-collection pause, and
// nobody is watching. So a task is never handed over for good: it is leased
// for a visibility timeout, invisible to other workers while the lease
// holds, and visible again by itself when the lease ends without an
// acknowledgement. The worker renews the lease while it works, stops when
// the lease is lost, and takes a task only when it has room to work on it.
package lease

import (
	"context"
	"errors"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// The types the queue and the worker share with the suite and the later
// labs. They are defined in package task and re-exported here. Do not
// change them.

// Task is one unit of work in the queue; Task.ID names it.
type Task = task.Task

// LeaseToken is the opaque receipt of one delivery of a task.
type LeaseToken = task.LeaseToken

// Lease is one delivery of a task to one worker, invisible to the others
// until Lease.Expires.
type Lease = task.Lease

// LeaseQueue is what a worker needs from a queue: Lease, Extend, Ack, Nack.
type LeaseQueue = task.LeaseQueue

// Options configure a Queue.
type Options = task.QueueOptions

// WorkerOptions configure a Worker.
type WorkerOptions = task.WorkerOptions

// Handler works on one leased task.
type Handler = task.Handler

// The visibility timeouts a Queue accepts.
const (
	DefaultVisibilityTimeout = task.DefaultVisibilityTimeout
	MaxVisibilityTimeout     = task.MaxVisibilityTimeout
)

// The errors of a Queue, matched with errors.Is.
var (
	ErrNoTask          = task.ErrNoTask
	ErrLeaseLost       = task.ErrLeaseLost
	ErrInvalidDuration = task.ErrInvalidDuration
	ErrInvalidTask     = task.ErrInvalidTask
	ErrDuplicateTask   = task.ErrDuplicateTask
)

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// the queue and the worker work.
var ErrNotImplemented = errors.New("lease: not implemented yet (TODO in labs/05-lease)")

// Queue is an in-memory task queue with visibility timeouts, safe for
// concurrent use by many workers. Build it with New.
type Queue struct {
	// TODO: the tasks, their leases, and whatever keeps them consistent
	// when many workers call at once.
}

// New returns an empty queue whose leases last opts.VisibilityTimeout
// (zero means DefaultVisibilityTimeout). A negative timeout, or one longer
// than MaxVisibilityTimeout, is an error wrapping ErrInvalidDuration.
func New(opts Options) (*Queue, error) {
	// TODO: implement. Start with the README's "What to implement".
	return nil, ErrNotImplemented
}

// Enqueue adds t to the queue, visible at once. A task without an ID is an
// error wrapping ErrInvalidTask; a task whose ID is already in the queue
// (not yet acknowledged) is an error wrapping ErrDuplicateTask, and the
// queued task is left as it is.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	return ErrNotImplemented
}

// Lease leases the visible task that was enqueued first to holder: the task
// stays invisible to every Lease until the returned lease's Expires, the
// queue's visibility timeout from now, unless the holder renews it. Every
// lease has a new token and the task's next Attempt number. With no visible
// task, Lease returns an error wrapping ErrNoTask at once.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	return Lease{}, ErrNotImplemented
}

// Extend renews the lease of token so that it ends d after now: not after
// the time of the Lease call, and not d after the old expiry. It returns
// the renewed lease. Only the current lease can be renewed: a token whose
// lease has expired, even if nobody has leased the task since, or that was
// replaced, acknowledged or released, gets an error wrapping ErrLeaseLost.
// d must be more than zero and at most MaxVisibilityTimeout, or the error
// wraps ErrInvalidDuration. A failed Extend changes nothing.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	return Lease{}, ErrNotImplemented
}

// Ack acknowledges the delivery of token: the task leaves the queue and is
// never delivered again. Only the current lease can acknowledge: any other
// token gets an error wrapping ErrLeaseLost and the task is left as it is.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	return ErrNotImplemented
}

// Nack ends the lease of token and makes its task visible again delay after
// now (zero: at once), for another delivery. Only the current lease can be
// released: any other token gets an error wrapping ErrLeaseLost. delay must
// be between zero and MaxVisibilityTimeout, or the error wraps
// ErrInvalidDuration. A failed Nack changes nothing.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	return ErrNotImplemented
}
