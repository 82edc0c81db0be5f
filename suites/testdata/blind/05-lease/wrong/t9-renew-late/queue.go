// Package lease is a task queue with lease-based checkout and visibility
// timeouts, and a worker that takes tasks from it only as fast as it can
// work on them.
package lease

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Task is one unit of work in the queue; Task.ID names it.
type Task = task.Task

// LeaseToken is the opaque receipt of one delivery of a task.
type LeaseToken = task.LeaseToken

// Lease is one delivery of a task to one worker.
type Lease = task.Lease

// LeaseQueue is what a worker needs from a queue.
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

// entry is one task in the queue, with its current delivery.
type entry struct {
	task      Task
	seq       uint64     // enqueue order
	attempt   int        // deliveries so far
	token     LeaseToken // current delivery's token, "" when none
	holder    string     // current delivery's holder
	expires   time.Time  // current lease's end (valid when token != "")
	visibleAt time.Time  // after a Nack: not visible before this
}

// leased reports whether e's current lease holds at now.
func (e *entry) leased(now time.Time) bool {
	return e.token != "" && now.Before(e.expires)
}

func (e *entry) visible(now time.Time) bool {
	return !e.leased(now) && !now.Before(e.visibleAt)
}

// Queue is an in-memory task queue with visibility timeouts, safe for
// concurrent use by many workers. Build it with New.
type Queue struct {
	timeout time.Duration

	mu      sync.Mutex
	nextSeq uint64
	nextTok uint64
	order   []*entry              // by seq
	byID    map[string]*entry     // queued or leased tasks
	byToken map[LeaseToken]*entry // current tokens only
}

// New returns an empty queue whose leases last opts.VisibilityTimeout.
func New(opts Options) (*Queue, error) {
	d := opts.VisibilityTimeout
	if d < 0 || d > MaxVisibilityTimeout {
		return nil, fmt.Errorf("lease: visibility timeout %v: %w", d, ErrInvalidDuration)
	}
	if d == 0 {
		d = DefaultVisibilityTimeout
	}
	return &Queue{
		timeout: d,
		byID:    make(map[string]*entry),
		byToken: make(map[LeaseToken]*entry),
	}, nil
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	return nil
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if t.ID == "" {
		return fmt.Errorf("lease: enqueue: %w", ErrInvalidTask)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.byID[t.ID]; ok {
		return fmt.Errorf("lease: enqueue %q: %w", t.ID, ErrDuplicateTask)
	}
	q.nextSeq++
	e := &entry{task: t, seq: q.nextSeq}
	q.byID[t.ID] = e
	q.order = append(q.order, e)
	return nil
}

func (q *Queue) newToken() LeaseToken {
	q.nextTok++
	return LeaseToken("lt-" + strconv.FormatUint(q.nextTok, 10))
}

func (q *Queue) leaseOf(e *entry) Lease {
	return Lease{Task: e.task, Token: e.token, Attempt: e.attempt, Expires: e.expires}
}

// Lease leases the visible task that was enqueued first to holder.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return Lease{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	for _, e := range q.order {
		if !e.visible(now) {
			continue
		}
		if e.token != "" {
			delete(q.byToken, e.token)
		}
		e.attempt++
		e.token = q.newToken()
		e.expires = now.Add(q.timeout)
		q.byToken[e.token] = e
		l := q.leaseOf(e)
		l.Holder = holder
		e.holder = holder
		return l, nil
	}
	return Lease{}, fmt.Errorf("lease: %w", ErrNoTask)
}

// current returns the entry whose current, unexpired lease token is.
func (q *Queue) current(token LeaseToken, now time.Time) (*entry, bool) {
	e, ok := q.byToken[token]
	if !ok || e.token != token || !e.leased(now) {
		return nil, false
	}
	return e, true
}

// Extend renews the lease of token so that it ends d after now.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return Lease{}, err
	}
	if d <= 0 || d > MaxVisibilityTimeout {
		return Lease{}, fmt.Errorf("lease: extend by %v: %w", d, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, ok := q.current(token, now)
	if !ok {
		return Lease{}, fmt.Errorf("lease: extend: %w", ErrLeaseLost)
	}
	e.expires = now.Add(d)
	l := q.leaseOf(e)
	l.Holder = e.holder
	return l, nil
}

// Ack acknowledges the delivery of token: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.current(token, time.Now())
	if !ok {
		return fmt.Errorf("lease: ack: %w", ErrLeaseLost)
	}
	delete(q.byToken, token)
	delete(q.byID, e.task.ID)
	for i, x := range q.order {
		if x == e {
			q.order = append(q.order[:i:i], q.order[i+1:]...)
			break
		}
	}
	return nil
}

// Nack ends the lease of token and makes its task visible again delay
// after now.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if delay < 0 || delay > MaxVisibilityTimeout {
		return fmt.Errorf("lease: nack with delay %v: %w", delay, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, ok := q.current(token, now)
	if !ok {
		return fmt.Errorf("lease: nack: %w", ErrLeaseLost)
	}
	delete(q.byToken, token)
	e.token = ""
	e.expires = time.Time{}
	e.visibleAt = now.Add(delay)
	return nil
}
