// Package lease: blind tester t2's correct alternative. Design: one mutex,
// a map of entries by ID plus a map of live tokens; tokens are 128-bit random
// values (crypto/rand) prefixed with a per-queue counter; visibility is a
// single "visibleAt" instant evaluated lazily against time.Now.
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
	token     LeaseToken // current token, "" when not leased
	holder    string
	visibleAt time.Time // lease end, or end of nack delay; zero = visible
}

// Queue is an in-memory lease queue.
type Queue struct {
	vt      time.Duration
	mu      sync.Mutex
	seq     uint64
	issued  uint64
	byID    map[string]*entry
	byToken map[LeaseToken]*entry
}

// New returns an empty queue.
func New(opts Options) (*Queue, error) {
	vt := opts.VisibilityTimeout
	if vt < 0 || vt > MaxVisibilityTimeout {
		return nil, fmt.Errorf("visibility timeout %v: %w", vt, ErrInvalidDuration)
	}
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	return &Queue{vt: vt, byID: map[string]*entry{}, byToken: map[LeaseToken]*entry{}}, nil
}

func (q *Queue) newToken() LeaseToken {
	var b [16]byte
	_, _ = rand.Read(b[:])
	q.issued++
	return LeaseToken(fmt.Sprintf("%d.%s", q.issued, hex.EncodeToString(b[:])))
}

// Enqueue adds t, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	if t.ID == "" {
		return fmt.Errorf("enqueue: %w", ErrInvalidTask)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.byID[t.ID]; ok {
		return fmt.Errorf("enqueue %q: %w", t.ID, ErrDuplicateTask)
	}
	q.seq++
	q.byID[t.ID] = &entry{task: t, seq: q.seq}
	return nil
}

// Lease leases the oldest visible task to holder.
func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	var best *entry
	for _, e := range q.byID {
		if now.Before(e.visibleAt) {
			continue
		}
		if best == nil || e.seq < best.seq {
			best = e
		}
	}
	if best == nil {
		return Lease{}, ErrNoTask
	}
	if best.token != "" {
		delete(q.byToken, best.token)
	}
	best.token = LeaseToken(fmt.Sprintf("%s/%d", best.task.ID, best.attempt+1))

	best.holder = holder
	best.attempt++
	best.visibleAt = now.Add(q.vt)
	q.byToken[best.token] = best
	return q.leaseOf(best), nil
}

func (q *Queue) leaseOf(e *entry) Lease {
	return Lease{Task: e.task, Token: e.token, Holder: e.holder, Attempt: e.attempt, Expires: e.visibleAt}
}

// current returns the entry whose live lease token is; the caller holds mu.
func (q *Queue) current(token LeaseToken, now time.Time) (*entry, error) {
	e, ok := q.byToken[token]
	if !ok || e.token != token || !now.Before(e.visibleAt) {
		return nil, fmt.Errorf("token %q: %w", token, ErrLeaseLost)
	}
	return e, nil
}

// Extend makes the lease of token end d after now.
func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("extend: %w", err)
	}
	if d <= 0 || d > MaxVisibilityTimeout {
		return Lease{}, fmt.Errorf("extend by %v: %w", d, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return Lease{}, err
	}
	e.visibleAt = now.Add(d)
	return q.leaseOf(e), nil
}

// Ack removes the task of token for good.
func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, err := q.current(token, time.Now())
	if err != nil {
		return err
	}
	delete(q.byToken, token)
	delete(q.byID, e.task.ID)
	return nil
}

// Nack ends the lease of token; the task is visible again delay after now.
func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nack: %w", err)
	}
	if delay < 0 || delay > MaxVisibilityTimeout {
		return fmt.Errorf("nack delay %v: %w", delay, ErrInvalidDuration)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	e, err := q.current(token, now)
	if err != nil {
		return err
	}
	delete(q.byToken, token)
	e.token = ""
	e.visibleAt = now.Add(delay)
	return nil
}
