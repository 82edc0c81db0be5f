// Package lease is a task queue with lease-based checkout and visibility
// timeouts, and a worker that takes tasks from it only as fast as it can
// work on them.
//
// Design: nothing in the queue is ever "swept". Each entry stores the end of
// its current lease and the instant it becomes visible; whether a task is
// visible, leased or delayed is computed from time.Now on every call. Tokens
// are 128-bit random strings; a map from token to entry finds the lease.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

type Task = task.Task
type LeaseToken = task.LeaseToken
type Lease = task.Lease
type LeaseQueue = task.LeaseQueue
type Options = task.QueueOptions
type WorkerOptions = task.WorkerOptions
type Handler = task.Handler

const (
	DefaultVisibilityTimeout = task.DefaultVisibilityTimeout
	MaxVisibilityTimeout     = task.MaxVisibilityTimeout
)

var (
	ErrNoTask          = task.ErrNoTask
	ErrLeaseLost       = task.ErrLeaseLost
	ErrInvalidDuration = task.ErrInvalidDuration
	ErrInvalidTask     = task.ErrInvalidTask
	ErrDuplicateTask   = task.ErrDuplicateTask
)

type entry struct {
	task      Task
	seq       uint64
	attempt   int
	token     LeaseToken // the current lease's token; "" when none
	holder    string
	leaseEnd  time.Time // the current lease holds while now < leaseEnd
	visibleAt time.Time // when not leased: visible from then on
}

// Queue is an in-memory task queue with visibility timeouts.
type Queue struct {
	vt time.Duration

	mu      sync.Mutex
	seq     uint64
	entries map[string]*entry     // by task ID
	byToken map[LeaseToken]*entry // current tokens only
}

// New returns an empty queue.
func New(opts Options) (*Queue, error) {
	vt := opts.VisibilityTimeout
	if vt < 0 || vt > MaxVisibilityTimeout {
		return nil, fmt.Errorf("lease: visibility timeout %v: %w", vt, ErrInvalidDuration)
	}
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	return &Queue{vt: vt, entries: map[string]*entry{}, byToken: map[LeaseToken]*entry{}}, nil
}

func newToken() LeaseToken {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return LeaseToken(hex.EncodeToString(b[:]))
}

func (e *entry) leased(now time.Time) bool { return e.token != "" && now.Before(e.leaseEnd) }

func (e *entry) visible(now time.Time) bool {
	if e.token != "" {
		return !now.Before(e.leaseEnd)
	}
	return !now.Before(e.visibleAt)
}

func (e *entry) lease() Lease {
	return Lease{Task: e.task, Token: e.token, Holder: e.holder, Attempt: e.attempt, Expires: e.leaseEnd}
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: enqueue: %w", err)
	}
	if t.ID == "" {
		return fmt.Errorf("lease: enqueue: %w: empty ID", ErrInvalidTask)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.entries[t.ID]; ok {
		return fmt.Errorf("lease: enqueue %q: %w", t.ID, ErrDuplicateTask)
	}
	q.seq++
	q.entries[t.ID] = &entry{task: t, seq: q.seq, visibleAt: time.Now()}
	return nil
}

// Lease leases the visible task that was enqueued first to holder.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: lease: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	var best *entry
	for _, e := range q.entries {
		if e.visible(now) && (best == nil || e.seq < best.seq) {
			best = e
		}
	}
	if best == nil {
		return Lease{}, ErrNoTask
	}
	if best.token != "" {
		delete(q.byToken, best.token)
	}
	best.attempt++
	best.token = newToken()
	best.holder = holder
	best.leaseEnd = now.Add(q.vt)
	q.byToken[best.token] = best
	return best.lease(), nil
}

// current returns the live lease of token, or ErrLeaseLost.
func (q *Queue) current(token LeaseToken, now time.Time) (*entry, error) {
	e := q.byToken[token]
	if token == "" || e == nil || e.token != token || !e.leased(now) {
		return nil, fmt.Errorf("lease: token %q: %w", token, ErrLeaseLost)
	}
	return e, nil
}

// Extend renews the lease of token so that it ends d after now.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: extend: %w", err)
	}
	if d <= 0 || d > MaxVisibilityTimeout {
		return Lease{}, fmt.Errorf("lease: extend by %v: %w", d, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return Lease{}, err
	}
	e.leaseEnd = now.Add(d)
	return e.lease(), nil
}

// Ack acknowledges the delivery of token.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: ack: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, err := q.current(token, time.Now())
	if err != nil {
		return err
	}
	delete(q.byToken, token)
	delete(q.entries, e.task.ID)
	return nil
}

// Nack ends the lease of token and makes its task visible again delay after now.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lease: nack: %w", err)
	}
	if delay < 0 || delay > MaxVisibilityTimeout {
		return fmt.Errorf("lease: nack delay %v: %w", delay, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return err
	}
	e.leaseEnd = now.Add(delay) // invisible until the delay is over
	return nil
}
