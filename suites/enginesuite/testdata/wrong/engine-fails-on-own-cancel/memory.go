package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Memory is a backend in the process's memory: every operation is one
// critical section under one mutex, which is what makes it atomic. Its jobs
// are lost with the process; Redis is the durable one.
type Memory struct {
	cfg config

	mu     sync.Mutex
	jobs   map[string]*record
	seq    int64 // submission order, to break ties between equal times
	tokens Token // the last fencing token granted
	open   int   // queued and leased jobs: what Capacity bounds
}

// record is one job's state.
type record struct {
	info task.JobInfo
	seq  int64
}

// NewMemory returns an empty in-memory backend, or ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	cfg, err := resolve(o)
	if err != nil {
		return nil, err
	}
	return &Memory{cfg: cfg, jobs: map[string]*record{}}, nil
}

// Submit stores j, visible at once, and returns true; false for a
// resubmission of the same job. ErrConflict for the same ID with other
// contents, ErrInvalidJob, ErrFull.
func (m *Memory) Submit(ctx context.Context, j Job) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := validJob(j); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The idempotency check comes first: a duplicate takes no capacity, so
	// it is answered even when the backend is full.
	if r, ok := m.jobs[j.ID]; ok {
		if !sameJob(r.info.Job, j) {
			return false, fmt.Errorf("submit %q: %w", j.ID, ErrConflict)
		}
		return false, nil
	}
	// Admission before anything is stored: a rejected job leaves no trace,
	// so its ID is free to be submitted again once there is room.
	if m.open >= m.cfg.capacity {
		return false, fmt.Errorf("submit %q: %w (%d unfinished jobs)", j.ID, ErrFull, m.open)
	}
	m.seq++
	m.open++
	j.Steps = slices.Clone(j.Steps) // the caller's slice stays the caller's
	m.jobs[j.ID] = &record{seq: m.seq, info: task.JobInfo{Job: j, State: task.JobQueued, Until: m.cfg.clock()}}
	return true, nil
}

func sameJob(a, b Job) bool {
	return a.ID == b.ID && a.Account == b.Account && slices.Equal(a.Steps, b.Steps)
}

// Lease delivers the job that became visible first: a queued job whose
// backoff is over, or a leased one whose lease has ended. A job whose last
// allowed delivery ended without an outcome is dead-lettered instead.
func (m *Memory) Lease(ctx context.Context, worker string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	for {
		r := m.nextVisible(now)
		if r == nil {
			return Lease{}, ErrNoJob
		}
		in := &r.info
		if in.Deliveries >= m.cfg.maxDeliveries {
			m.finish(in, task.JobDead)
			in.Reason = task.ReasonMaxDeliveries
			continue
		}
		// The delivery is counted here, when it happens, not when (or if)
		// a failure is reported: a worker that crashes reports nothing.
		m.tokens++
		in.State = task.JobLeased
		in.Deliveries++
		in.Token = m.tokens
		in.Until = now.Add(m.cfg.visibility)
		return Lease{Job: cloneJob(in.Job), Token: in.Token, Worker: worker, Delivery: in.Deliveries, Step: in.Step, Expires: in.Until}, nil
	}
}

// nextVisible returns the unfinished job with the earliest Until at or
// before now, or nil.
func (m *Memory) nextVisible(now time.Time) *record {
	var best *record
	for _, r := range m.jobs {
		if !unfinished(r.info.State) || r.info.Until.After(now) {
			continue
		}
		if best == nil || earlier(r, best) {
			best = r
		}
	}
	return best
}

// earlier orders jobs by the instant they became visible, and equal
// instants by submission, so that a run is the same every time (the map's
// order is random).
func earlier(a, b *record) bool {
	if c := a.info.Until.Compare(b.info.Until); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

func unfinished(s State) bool { return s == task.JobQueued || s == task.JobLeased }

// current returns the record that l is the current lease of, at now, or
// ErrLeaseLost: the token must be the job's latest and the lease must still
// hold (now before Until). m.mu must be held.
func (m *Memory) current(l Lease, now time.Time) (*record, error) {
	r, ok := m.jobs[l.Job.ID]
	if !ok || r.info.State != task.JobLeased || r.info.Token != l.Token || !now.Before(r.info.Until) {
		return nil, fmt.Errorf("job %q token %d: %w", l.Job.ID, l.Token, ErrLeaseLost)
	}
	return r, nil
}

// Checkpoint records step and renews the lease from now.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	r, err := m.current(l, now)
	if err != nil {
		return Lease{}, err
	}
	r.info.Step = step
	r.info.Until = now.Add(m.cfg.visibility)
	l.Step, l.Expires = step, r.info.Until
	return l, nil
}

// Complete marks the job done.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.current(l, m.cfg.clock())
	if err != nil {
		return err
	}
	m.finish(&r.info, task.JobDone)
	return nil
}

// Fail records cause and makes the job visible again after the backoff, or
// dead-letters it: at once for a permanent cause, and when this was its
// last allowed delivery.
func (m *Memory) Fail(ctx context.Context, l Lease, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.clock()
	r, err := m.current(l, now)
	if err != nil {
		return err
	}
	in := &r.info
	in.LastError = cause.Error()
	switch {
	case errors.Is(cause, ErrPermanent):
		m.finish(in, task.JobDead)
		in.Reason = task.ReasonPermanent
	case in.Deliveries >= m.cfg.maxDeliveries:
		m.finish(in, task.JobDead)
		in.Reason = task.ReasonMaxDeliveries
	default:
		in.State = task.JobQueued
		in.Until = now.Add(m.cfg.backoff(in.Deliveries))
	}
	return nil
}

// finish moves a job to a final state, which frees its capacity.
func (m *Memory) finish(in *task.JobInfo, s State) {
	in.State = s
	in.Until = time.Time{}
	m.open--
}

// Inspect reports the job with the given ID, or ErrUnknownJob.
func (m *Memory) Inspect(ctx context.Context, id string) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.jobs[id]
	if !ok {
		return Info{}, fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
	}
	in := r.info
	in.Job = cloneJob(in.Job)
	return in, nil
}

func cloneJob(j Job) Job {
	j.Steps = slices.Clone(j.Steps)
	return j
}
