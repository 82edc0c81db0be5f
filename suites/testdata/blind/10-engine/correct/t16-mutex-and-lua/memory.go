package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Memory is a backend in the process's memory. Its jobs are lost with the
// process; it is safe for concurrent use by many goroutines.
type Memory struct {
	cfg config

	mu         sync.Mutex
	jobs       map[string]*memJob
	unfinished map[string]*memJob
	lastToken  Token
}

type memJob struct {
	job        Job
	state      State
	deliveries int
	step       int
	token      Token
	until      time.Time
	lastError  string
	reason     task.DeadLetterReason
}

// NewMemory returns an empty in-memory backend, or an error wrapping
// ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	c, err := resolve(o)
	if err != nil {
		return nil, err
	}
	return &Memory{cfg: c, jobs: map[string]*memJob{}, unfinished: map[string]*memJob{}}, nil
}

// Submit stores j, visible at once, and returns true; or returns false for
// a job submitted before with the same ID and contents, changing nothing.
// ErrConflict for the same ID with other contents, ErrInvalidJob, ErrFull.
func (m *Memory) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctxErr(ctx, "submit"); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	now := m.cfg.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.jobs[j.ID]; ok {
		if sameJob(r.job, j) {
			return false, nil
		}
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrConflict)
	}
	if len(m.unfinished) >= m.cfg.capacity {
		return false, fmt.Errorf("submit %q: %w", j.ID, ErrFull)
	}
	r := &memJob{job: copyJob(j), state: task.JobQueued, until: now}
	m.jobs[j.ID] = r
	m.unfinished[j.ID] = r
	return true, nil
}

// Lease delivers to worker the visible job that became visible first, or
// returns ErrNoJob.
func (m *Memory) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctxErr(ctx, "lease"); err != nil {
		return Lease{}, err
	}
	now := m.cfg.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		var best *memJob
		for _, r := range m.unfinished {
			if r.until.After(now) {
				continue
			}
			if best == nil || r.until.Before(best.until) {
				best = r
			}
		}
		if best == nil {
			return Lease{}, ErrNoJob
		}
		if best.state == task.JobLeased && best.deliveries >= m.cfg.maxDeliveries {
			m.bury(best, task.ReasonMaxDeliveries)
			continue
		}
		m.lastToken++
		best.deliveries++
		best.token = m.lastToken
		best.state = task.JobLeased
		best.until = now.Add(m.cfg.vis)
		return Lease{
			Job:      copyJob(best.job),
			Token:    best.token,
			Worker:   worker,
			Delivery: best.deliveries,
			Step:     best.step,
			Expires:  best.until,
		}, nil
	}
}

func (m *Memory) bury(r *memJob, reason task.DeadLetterReason) {
	r.state = task.JobDead
	r.reason = reason
	r.until = time.Time{}
	delete(m.unfinished, r.job.ID)
}

// current returns l's job if l is its current lease at now; m.mu is held.
func (m *Memory) current(l Lease, now time.Time) (*memJob, error) {
	r, ok := m.jobs[l.Job.ID]
	if !ok || r.state != task.JobLeased || r.token != l.Token || l.Token == 0 || !now.Before(r.until) {
		return nil, fmt.Errorf("lease %v: %w", l, ErrLeaseLost)
	}
	return r, nil
}

// Checkpoint records that step steps of l's job are done and renews the
// lease from now. ErrLeaseLost unless l is the job's current lease.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	now := m.cfg.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.current(l, now)
	if err != nil {
		return Lease{}, err
	}
	r.step = step
	r.until = now.Add(m.cfg.vis)
	l.Step = step
	l.Expires = r.until
	l.Job = copyJob(r.job)
	return l, nil
}

// Complete marks l's job done. ErrLeaseLost unless l is the current lease.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	now := m.cfg.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.current(l, now)
	if err != nil {
		return err
	}
	r.state = task.JobDone
	r.until = time.Time{}
	delete(m.unfinished, r.job.ID)
	return nil
}

// Fail ends l with cause: the job is visible again after the backoff, or
// dead-lettered. ErrLeaseLost unless l is the current lease.
func (m *Memory) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctxErr(ctx, "fail"); err != nil {
		return err
	}
	now := m.cfg.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.current(l, now)
	if err != nil {
		return err
	}
	r.lastError = cause.Error()
	switch {
	case errors.Is(cause, ErrPermanent):
		m.bury(r, task.ReasonPermanent)
	case r.deliveries >= m.cfg.maxDeliveries:
		m.bury(r, task.ReasonMaxDeliveries)
	default:
		r.state = task.JobQueued
		r.until = now.Add(m.cfg.backoff(r.deliveries))
	}
	return nil
}

// Inspect reports the job with the given ID, or ErrUnknownJob.
func (m *Memory) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctxErr(ctx, "inspect"); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.jobs[id]
	if !ok {
		return Info{}, fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
	}
	return Info{
		Job:        copyJob(r.job),
		State:      r.state,
		Deliveries: r.deliveries,
		Step:       r.step,
		Token:      r.token,
		Until:      r.until,
		LastError:  r.lastError,
		Reason:     r.reason,
	}, nil
}
