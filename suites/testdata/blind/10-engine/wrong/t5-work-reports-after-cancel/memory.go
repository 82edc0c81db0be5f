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
	unfinished int
	lastToken  Token
	seq        uint64
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
	seq        uint64 // tie-break among jobs visible from the same instant
}

func (j *memJob) unfinished() bool {
	return j.state == task.JobQueued || j.state == task.JobLeased
}

// NewMemory returns an empty in-memory backend, or an error wrapping
// ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	return &Memory{cfg: cfg, jobs: make(map[string]*memJob)}, nil
}

// Submit stores j, visible at once, and returns true; or returns false for
// a job submitted before with the same ID and contents, changing nothing.
func (m *Memory) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctxErr(ctx, "submit"); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.jobs[j.ID]; ok {
		if sameContents(old.job, j) {
			return false, nil
		}
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
	}
	if m.unfinished >= m.cfg.capacity {
		return false, fmt.Errorf("engine: submit %q: %d unfinished jobs: %w", j.ID, m.unfinished, ErrFull)
	}
	m.seq++
	m.jobs[j.ID] = &memJob{
		job:   copyJob(j),
		state: task.JobQueued,
		until: m.cfg.clock(),
		seq:   m.seq,
	}
	m.unfinished++
	return true, nil
}

// Lease delivers to worker the visible job that became visible first, or
// returns ErrNoJob.
func (m *Memory) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctxErr(ctx, "lease"); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	for {
		var best *memJob
		for _, j := range m.jobs {
			if !j.unfinished() || j.until.After(now) {
				continue
			}
			if best == nil || j.until.Before(best.until) || (j.until.Equal(best.until) && j.seq < best.seq) {
				best = j
			}
		}
		if best == nil {
			return Lease{}, ErrNoJob
		}
		if best.state == task.JobLeased && best.deliveries >= m.cfg.maxDeliveries {
			// Its last lease ended without Complete or Fail.
			best.state = task.JobDead
			best.reason = task.ReasonMaxDeliveries
			best.until = time.Time{}
			m.unfinished--
			continue
		}
		m.lastToken++
		best.token = m.lastToken
		best.deliveries++
		best.state = task.JobLeased
		best.until = now.Add(m.cfg.visibility).Truncate(time.Millisecond)
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

// current returns l's job when l is its current lease at now.
func (m *Memory) current(l Lease, now time.Time) (*memJob, error) {
	j, ok := m.jobs[l.Job.ID]
	if !ok || j.state != task.JobLeased || j.token != l.Token || !now.Before(j.until) {
		return nil, fmt.Errorf("engine: %v: %w", l, ErrLeaseLost)
	}
	return j, nil
}

// Checkpoint records that step steps of l's job are done and renews the
// lease from now. ErrLeaseLost unless l is the job's current lease.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	j, err := m.current(l, now)
	if err != nil {
		return Lease{}, err
	}
	j.step = step
	j.until = now.Add(m.cfg.visibility).Truncate(time.Millisecond)
	l.Step = step
	l.Expires = j.until
	return l, nil
}

// Complete marks l's job done. ErrLeaseLost unless l is the current lease.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.current(l, m.cfg.clock())
	if err != nil {
		return err
	}
	j.state = task.JobDone
	j.until = time.Time{}
	m.unfinished--
	return nil
}

// Fail ends l with cause: the job is visible again after the backoff, or
// dead-lettered. ErrLeaseLost unless l is the current lease.
func (m *Memory) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctxErr(ctx, "fail"); err != nil {
		return err
	}
	if cause == nil {
		cause = errors.New("engine: Fail called with a nil cause")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	j, err := m.current(l, now)
	if err != nil {
		return err
	}
	j.lastError = cause.Error()
	switch {
	case errors.Is(cause, ErrPermanent):
		j.state, j.reason, j.until = task.JobDead, task.ReasonPermanent, time.Time{}
		m.unfinished--
	case j.deliveries >= m.cfg.maxDeliveries:
		j.state, j.reason, j.until = task.JobDead, task.ReasonMaxDeliveries, time.Time{}
		m.unfinished--
	default:
		j.state = task.JobQueued
		j.until = now.Add(m.cfg.backoff(j.deliveries)).Truncate(time.Millisecond)
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
	j, ok := m.jobs[id]
	if !ok {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	return Info{
		Job:        copyJob(j.job),
		State:      j.state,
		Deliveries: j.deliveries,
		Step:       j.step,
		Token:      j.token,
		Until:      j.until,
		LastError:  j.lastError,
		Reason:     j.reason,
	}, nil
}
