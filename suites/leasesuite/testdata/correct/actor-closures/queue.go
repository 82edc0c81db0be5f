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
	"fmt"
	"slices"
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

// Queue is an in-memory task queue with visibility timeouts. One goroutine,
// started by New, owns every task: each method sends it a function to run
// and waits for it, so nothing is shared and nothing needs a mutex. A
// leased task's lease ends when the clock reaches its expiry; the actor
// compares the clock with it whenever it is asked, so no timer is needed.
type Queue struct {
	visibility time.Duration
	ops        chan func()
	quit       chan struct{}
	closing    sync.Once

	// Owned by the actor goroutine.
	tasks  []*item // in enqueue order
	byID   map[string]*item
	issued uint64 // tokens issued so far
}

type item struct {
	task      Task
	visibleAt time.Time
	token     LeaseToken
	holder    string
	attempts  int
}

var errClosed = errors.New("lease: queue closed")

// New returns an empty queue whose leases last opts.VisibilityTimeout
// (zero means DefaultVisibilityTimeout). A negative timeout, or one longer
// than MaxVisibilityTimeout, is an error wrapping ErrInvalidDuration.
func New(opts Options) (*Queue, error) {
	vt := opts.VisibilityTimeout
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	if vt < 0 || vt > MaxVisibilityTimeout {
		return nil, fmt.Errorf("lease: new queue: visibility timeout %v: %w", vt, ErrInvalidDuration)
	}
	q := &Queue{visibility: vt, ops: make(chan func()), quit: make(chan struct{}), byID: map[string]*item{}}
	go q.loop()
	return q, nil
}

func (q *Queue) loop() {
	for {
		select {
		case op := <-q.ops:
			op()
		case <-q.quit:
			return
		}
	}
}

// Close stops the actor. Calls after Close fail.
func (q *Queue) Close() error {
	q.closing.Do(func() { close(q.quit) })
	return nil
}

// do runs f on the actor and waits for it.
func (q *Queue) do(f func() error) error {
	done := make(chan error, 1)
	select {
	case q.ops <- func() { done <- f() }:
		return <-done
	case <-q.quit:
		return errClosed
	}
}

func (q *Queue) holds(it *item, token LeaseToken, now time.Time) bool {
	return token != "" && it.token == token && now.Before(it.visibleAt)
}

func (q *Queue) find(token LeaseToken, now time.Time) (*item, error) {
	for _, it := range q.tasks {
		if q.holds(it, token, now) {
			return it, nil
		}
	}
	return nil, ErrLeaseLost
}

func (it *item) lease() Lease {
	return Lease{Task: it.task, Token: it.token, Holder: it.holder, Attempt: it.attempts, Expires: it.visibleAt}
}

func checkDuration(d, least time.Duration) error {
	if d < least || d > MaxVisibilityTimeout {
		return fmt.Errorf("%v: %w", d, ErrInvalidDuration)
	}
	return nil
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: enqueue: %w", err)
	}
	if t.ID == "" {
		return fmt.Errorf("lease: enqueue: %w", ErrInvalidTask)
	}
	return q.do(func() error {
		if _, ok := q.byID[t.ID]; ok {
			return fmt.Errorf("lease: enqueue %s: %w", t.ID, ErrDuplicateTask)
		}
		it := &item{task: t, visibleAt: time.Now()}
		q.tasks = append(q.tasks, it)
		q.byID[t.ID] = it
		return nil
	})
}

// Lease leases the visible task that was enqueued first to holder.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: lease: %w", err)
	}
	var l Lease
	err := q.do(func() error {
		now := time.Now()
		for _, it := range q.tasks {
			if now.Before(it.visibleAt) {
				continue
			}
			q.issued++
			it.token = LeaseToken(fmt.Sprintf("lease-%d", q.issued))
			it.holder = holder
			it.attempts++
			it.visibleAt = now.Add(q.visibility)
			l = it.lease()
			return nil
		}
		return ErrNoTask
	})
	if err != nil {
		return Lease{}, fmt.Errorf("lease: lease to %s: %w", holder, err)
	}
	return l, nil
}

// Extend renews the lease of token so that it ends d after now.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	if err := checkDuration(d, 1); err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	var l Lease
	err := q.do(func() error {
		now := time.Now()
		it, err := q.find(token, now)
		if err != nil {
			return err
		}
		it.visibleAt = now.Add(d)
		l = it.lease()
		return nil
	})
	if err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	return l, nil
}

// Ack acknowledges the delivery of token: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: ack: %w", err)
	}
	return q.do(func() error {
		it, err := q.find(token, time.Now())
		if err != nil {
			return fmt.Errorf("lease: ack: %w", err)
		}
		q.tasks = slices.DeleteFunc(q.tasks, func(x *item) bool { return x == it })
		delete(q.byID, it.task.ID)
		return nil
	})
}

// Nack ends the lease of token; the task is visible again delay after now.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	if err := checkDuration(delay, 0); err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	return q.do(func() error {
		now := time.Now()
		it, err := q.find(token, now)
		if err != nil {
			return fmt.Errorf("lease: nack: %w", err)
		}
		it.token = ""
		it.visibleAt = now.Add(delay)
		return nil
	})
}
