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
	o options

	mu        sync.Mutex
	jobs      map[string]*memJob
	active    map[string]*memJob // queued or leased
	lastToken Token
	seq       uint64
}

type memJob struct {
	job        Job
	state      State
	deliveries int
	step       int
	token      Token
	until      time.Time
	lastErr    string
	reason     task.DeadLetterReason
	seq        uint64 // tie-break among jobs visible from one instant
}

// NewMemory returns an empty in-memory backend, or an error wrapping
// ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	opts, err := checkOptions(o)
	if err != nil {
		return nil, err
	}
	return &Memory{o: opts, jobs: map[string]*memJob{}, active: map[string]*memJob{}}, nil
}

func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: %s: %w", op, err)
	}
	return nil
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.jobs[j.ID]; ok {
		if sameJob(old.job, j) {
			return false, nil
		}
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
	}
	if len(m.active) >= m.o.capacity {
		return false, fmt.Errorf("engine: submit %q: %d unfinished jobs: %w", j.ID, len(m.active), ErrFull)
	}
	m.seq++
	mj := &memJob{job: copyJob(j), state: task.JobQueued, until: m.o.clock(), seq: m.seq}
	m.jobs[j.ID] = mj
	m.active[j.ID] = mj
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
	now := m.o.clock()
	for {
		var best *memJob
		for _, mj := range m.active {
			if mj.until.After(now) {
				continue
			}
			if best == nil || mj.until.Before(best.until) || (mj.until.Equal(best.until) && mj.seq < best.seq) {
				best = mj
			}
		}
		if best == nil {
			return Lease{}, ErrNoJob
		}
		if best.state == task.JobLeased && best.deliveries >= m.o.maxDeliv {
			best.state = task.JobDead
			best.reason = task.ReasonMaxDeliveries
			best.until = time.Time{}
			delete(m.active, best.job.ID)
			continue
		}
		m.lastToken++
		best.token = m.lastToken
		best.deliveries++
		best.state = task.JobLeased
		best.until = now.Add(m.o.visibility).Truncate(time.Millisecond)
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

// current returns l's job if l is its current lease at now.
func (m *Memory) current(l Lease, now time.Time) (*memJob, error) {
	mj, ok := m.jobs[l.Job.ID]
	if !ok || mj.state != task.JobLeased || mj.token != l.Token || !now.Before(mj.until) {
		return nil, fmt.Errorf("engine: lease of %q with token %d: %w", l.Job.ID, l.Token, ErrLeaseLost)
	}
	return mj, nil
}

// Checkpoint records that step steps of l's job are done and renews the
// lease from now. ErrLeaseLost unless l is the job's current lease.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.clock()
	mj, err := m.current(l, now)
	if err != nil {
		return Lease{}, err
	}
	if step < 0 || step > len(mj.job.Steps) {
		return Lease{}, errors.New("engine: checkpoint step out of range")
	}
	mj.step = step
	mj.until = now.Add(m.o.visibility).Truncate(time.Millisecond)
	l.Step = step
	l.Expires = mj.until
	l.Job = copyJob(l.Job)
	return l, nil
}

// Complete marks l's job done. ErrLeaseLost unless l is the current lease.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mj, err := m.current(l, m.o.clock())
	if err != nil {
		return err
	}
	mj.state = task.JobDone
	mj.until = time.Time{}
	delete(m.active, mj.job.ID)
	return nil
}

// Fail ends l with cause: the job is visible again after the backoff, or
// dead-lettered. ErrLeaseLost unless l is the current lease.
func (m *Memory) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctxErr(ctx, "fail"); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.clock()
	mj, err := m.current(l, now)
	if err != nil {
		return err
	}
	text := ""
	if cause != nil {
		text = cause.Error()
	}
	mj.lastErr = text
	switch {
	case errors.Is(cause, ErrPermanent):
		mj.state, mj.reason, mj.until = task.JobDead, task.ReasonPermanent, time.Time{}
		delete(m.active, mj.job.ID)
	case mj.deliveries >= m.o.maxDeliv:
		mj.state, mj.reason, mj.until = task.JobDead, task.ReasonMaxDeliveries, time.Time{}
		delete(m.active, mj.job.ID)
	default:
		mj.state = task.JobQueued
		mj.until = now.Add(m.o.backoff(mj.deliveries)).Truncate(time.Millisecond)
		m.seq++
		mj.seq = m.seq
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
	mj, ok := m.jobs[id]
	if !ok {
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	return Info{
		Job:        copyJob(mj.job),
		State:      mj.state,
		Deliveries: mj.deliveries,
		Step:       mj.step,
		Token:      mj.token,
		Until:      mj.until,
		LastError:  mj.lastErr,
		Reason:     mj.reason,
	}, nil
}
