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

// item is one task in the queue.
type item struct {
	t         Task
	seq       uint64
	attempts  int
	token     LeaseToken // current lease's token, "" when none
	holder    string
	expires   time.Time // the current lease holds while now is before it
	visibleAt time.Time // after a Nack: visible from then on
}

// leased reports whether the task's current lease holds at now.
func (it *item) leased(now time.Time) bool {
	return it.token != "" && now.Before(it.expires)
}

func (it *item) visible(now time.Time) bool {
	return !it.leased(now) && !now.Before(it.visibleAt)
}

// Queue is an in-memory task queue with visibility timeouts, safe for
// concurrent use by many workers. Build it with New.
type Queue struct {
	timeout time.Duration

	mu      sync.Mutex
	seq     uint64
	tokens  uint64
	items   []*item // in enqueue order
	byID    map[string]*item
	byToken map[LeaseToken]*item // the latest token of each task
}

// New returns an empty queue whose leases last opts.VisibilityTimeout.
func New(opts Options) (*Queue, error) {
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxVisibilityTimeout {
		return nil, fmt.Errorf("lease: visibility timeout %v: %w", opts.VisibilityTimeout, ErrInvalidDuration)
	}
	q := &Queue{timeout: opts.VisibilityTimeout, byID: map[string]*item{}, byToken: map[LeaseToken]*item{}}
	if q.timeout == 0 {
		q.timeout = DefaultVisibilityTimeout
	}
	return q, nil
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
	q.seq++
	it := &item{t: t, seq: q.seq}
	q.items = append(q.items, it)
	q.byID[t.ID] = it
	return nil
}

// Lease leases the visible task that was enqueued first to holder.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return Lease{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	for _, it := range q.items {
		if !it.visible(now) {
			continue
		}
		if it.token != "" {
			delete(q.byToken, it.token)
		}
		q.tokens++
		it.token = LeaseToken("lt-" + strconv.FormatUint(q.tokens, 10))
		it.attempts++
		it.holder = holder
		it.expires = now.Add(q.timeout)
		q.byToken[it.token] = it
		return it.lease(), nil
	}
	return Lease{}, fmt.Errorf("lease: %w", ErrNoTask)
}

func (it *item) lease() Lease {
	return Lease{Task: it.t, Token: it.token, Holder: it.holder, Attempt: it.attempts, Expires: it.expires}
}

// current returns the item whose current, unexpired lease is token.
// Callers hold q.mu.
func (q *Queue) current(token LeaseToken, now time.Time) (*item, bool) {
	it, ok := q.byToken[token]
	if !ok || token == "" || it.token != token || !it.leased(now) {
		return nil, false
	}
	return it, true
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
	it, ok := q.current(token, now)
	if !ok {
		return Lease{}, fmt.Errorf("lease: extend: %w", ErrLeaseLost)
	}
	it.expires = now.Add(d)
	return it.lease(), nil
}

// Ack acknowledges the delivery of token: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.current(token, time.Now())
	if !ok {
		return fmt.Errorf("lease: ack: %w", ErrLeaseLost)
	}
	delete(q.byToken, token)
	delete(q.byID, it.t.ID)
	for i, x := range q.items {
		if x == it {
			q.items = append(q.items[:i:i], q.items[i+1:]...)
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
		return fmt.Errorf("lease: nack delay %v: %w", delay, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	it, ok := q.current(token, now)
	if !ok {
		return fmt.Errorf("lease: nack: %w", ErrLeaseLost)
	}
	delete(q.byToken, token)
	it.token = ""
	it.visibleAt = now.Add(delay)
	return nil
}
