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
	"crypto/rand"
	"fmt"
	"sync"
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

// Queue is an in-memory task queue with visibility timeouts, safe for
// concurrent use. Build it with New.
//
// Each task is in one of two conditions, told apart by one instant, its
// visibleAt: before it the task is invisible (leased, or released with a
// delay), from it on the task is visible. Leasing a task moves visibleAt to
// the lease's expiry, so a lease nobody renews or acknowledges ends by
// itself, with no timer and no sweeper: the next Lease simply finds the task
// visible again.
type Queue struct {
	visibility time.Duration

	mu      sync.Mutex
	entries map[string]*entry     // by task id
	byToken map[LeaseToken]*entry // the current token of every leased entry
	next    int64                 // enqueue order
}

type entry struct {
	task      Task
	seq       int64      // enqueue order: among visible tasks, the oldest goes first
	visibleAt time.Time  // invisible before it; while leased, the lease's expiry
	token     LeaseToken // the latest delivery's token, "" before the first and after a Nack
	holder    string
	attempts  int
}

// leasedBy reports whether token is e's current lease at now: the latest
// delivery's token, and the lease not yet expired.
func (e *entry) leasedBy(token LeaseToken, now time.Time) bool {
	return token != "" && e.token == token && now.Before(e.visibleAt)
}

func (e *entry) lease() Lease {
	return Lease{Task: e.task, Token: e.token, Holder: e.holder, Attempt: e.attempts, Expires: e.visibleAt}
}

// New returns an empty queue whose leases last opts.VisibilityTimeout
// (zero means DefaultVisibilityTimeout). A negative timeout, or one longer
// than MaxVisibilityTimeout, is an error wrapping ErrInvalidDuration.
func New(opts Options) (*Queue, error) {
	vt := opts.VisibilityTimeout
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	if err := checkDuration("visibility timeout", vt, 1); err != nil {
		return nil, fmt.Errorf("lease: new queue: %w", err)
	}
	return &Queue{
		visibility: vt,
		entries:    map[string]*entry{},
		byToken:    map[LeaseToken]*entry{},
	}, nil
}

// checkDuration accepts d from least up to MaxVisibilityTimeout, both
// included.
func checkDuration(what string, d, least time.Duration) error {
	if d < least || d > MaxVisibilityTimeout {
		return fmt.Errorf("%s %v: %w (want %v to %v)", what, d, ErrInvalidDuration, least, MaxVisibilityTimeout)
	}
	return nil
}

// Enqueue adds t to the queue, visible at once. A task without an ID is an
// error wrapping ErrInvalidTask; a task whose ID is already in the queue
// (not yet acknowledged) is an error wrapping ErrDuplicateTask, and the
// queued task is left as it is.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: enqueue %s: %w", t.ID, err)
	}
	if t.ID == "" {
		return fmt.Errorf("lease: enqueue: %w: empty ID", ErrInvalidTask)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.entries[t.ID]; ok {
		return fmt.Errorf("lease: enqueue %s: %w", t.ID, ErrDuplicateTask)
	}
	q.next++
	q.entries[t.ID] = &entry{task: t, seq: q.next, visibleAt: time.Now()}
	return nil
}

// Lease leases the visible task that was enqueued first to holder: the task
// stays invisible to every Lease until the returned lease's Expires, the
// queue's visibility timeout from now, unless the holder renews it. Every
// lease has a new token and the task's next Attempt number. With no visible
// task, Lease returns an error wrapping ErrNoTask at once.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: lease to %s: %w", holder, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	var pick *entry
	for _, e := range q.entries {
		if e.visibleAt.After(now) {
			continue
		}
		if pick == nil || e.seq < pick.seq {
			pick = e
		}
	}
	if pick == nil {
		return Lease{}, fmt.Errorf("lease: lease to %s: %w", holder, ErrNoTask)
	}
	// A new delivery: the previous token, if any, dies here, even if its
	// holder is still working (its lease has ended).
	delete(q.byToken, pick.token)
	pick.token = newToken()
	pick.holder = holder
	pick.attempts++
	pick.visibleAt = now.Add(q.visibility)
	q.byToken[pick.token] = pick
	return pick.lease(), nil
}

// newToken returns a receipt nobody can guess or has seen: 128 random bits.
func newToken() LeaseToken {
	return LeaseToken(rand.Text())
}

// current returns the entry whose current lease token is, or an error
// wrapping ErrLeaseLost. q.mu must be held.
func (q *Queue) current(token LeaseToken, now time.Time) (*entry, error) {
	e, ok := q.byToken[token]
	if !ok || !e.leasedBy(token, now) {
		return nil, fmt.Errorf("token %s: %w", short(token), ErrLeaseLost)
	}
	return e, nil
}

// short abbreviates a token for error messages: its first 8 characters,
// quoted.
func short(token LeaseToken) string {
	return fmt.Sprintf("%.8q", string(token))
}

// Extend renews the lease of token so that it ends d after now: not after
// the time of the Lease call, and not d after the old expiry. It returns
// the renewed lease. Only the current lease can be renewed: a token whose
// lease has expired, even if nobody has leased the task since, or that was
// replaced, acknowledged or released, gets an error wrapping ErrLeaseLost.
// d must be more than zero and at most MaxVisibilityTimeout, or the error
// wraps ErrInvalidDuration. A failed Extend changes nothing.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	if err := checkDuration("extension", d, 1); err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	e.visibleAt = now.Add(d)
	return e.lease(), nil
}

// Ack acknowledges the delivery of token: the task leaves the queue and is
// never delivered again. Only the current lease can acknowledge: any other
// token gets an error wrapping ErrLeaseLost and the task is left as it is.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: ack: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, err := q.current(token, time.Now())
	if err != nil {
		return fmt.Errorf("lease: ack: %w", err)
	}
	delete(q.byToken, token)
	delete(q.entries, e.task.ID)
	return nil
}

// Nack ends the lease of token and makes its task visible again delay after
// now (zero: at once), for another delivery. Only the current lease can be
// released: any other token gets an error wrapping ErrLeaseLost. delay must
// be between zero and MaxVisibilityTimeout, or the error wraps
// ErrInvalidDuration. A failed Nack changes nothing.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	if err := checkDuration("delay", delay, 0); err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	delete(q.byToken, token)
	e.token = ""
	e.visibleAt = now.Add(delay)
	return nil
}
