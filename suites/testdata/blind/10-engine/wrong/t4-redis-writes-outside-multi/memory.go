package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// This design keeps every transition of a job as a pure function on a jobRec
// (below). Memory applies them under one mutex; Redis applies them inside a
// WATCH + MULTI/EXEC transaction on JSON records, so both backends share the
// exact same rules.

// jobRec is everything a backend keeps about one job.
type jobRec struct {
	Job        Job                   `json:"job"`
	State      State                 `json:"state"`
	Deliveries int                   `json:"deliveries"`
	Step       int                   `json:"step"`
	Token      Token                 `json:"token"`
	Worker     string                `json:"worker"`
	Until      int64                 `json:"until"` // unix ms; 0 for done and dead
	LastError  string                `json:"last_error"`
	Reason     task.DeadLetterReason `json:"reason"`
}

// config is a checked, defaulted Options.
type config struct {
	capacity int
	vis      time.Duration
	max      int
	base     time.Duration
	maxB     time.Duration
	now      func() time.Time
}

func newConfig(o Options) (config, error) {
	if o.Capacity < 0 || o.VisibilityTimeout < 0 || o.MaxDeliveries < 0 || o.BaseBackoff < 0 || o.MaxBackoff < 0 {
		return config{}, fmt.Errorf("engine: negative option in %+v: %w", o, ErrInvalidOptions)
	}
	if o.VisibilityTimeout > task.MaxJobVisibilityTimeout {
		return config{}, fmt.Errorf("engine: visibility timeout %v over %v: %w", o.VisibilityTimeout, task.MaxJobVisibilityTimeout, ErrInvalidOptions)
	}
	c := config{capacity: o.Capacity, vis: o.VisibilityTimeout, max: o.MaxDeliveries, base: o.BaseBackoff, maxB: o.MaxBackoff, now: o.Now}
	if c.capacity == 0 {
		c.capacity = task.DefaultCapacity
	}
	if c.vis == 0 {
		c.vis = task.DefaultJobVisibility
	}
	if c.max == 0 {
		c.max = task.DefaultJobMaxDeliveries
	}
	if c.base == 0 {
		c.base = task.DefaultBaseBackoff
	}
	if c.maxB == 0 {
		c.maxB = task.DefaultMaxBackoff
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// nowMs reads the clock, to the millisecond.
func (c config) nowMs() int64 { return c.now().UnixMilli() }

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// backoff is min(maxB, base*2^(n-1)), without overflow.
func (c config) backoff(n int) time.Duration {
	d := c.base
	for i := 1; i < n && d < c.maxB; i++ {
		if d > c.maxB/2 {
			d = c.maxB
			break
		}
		d *= 2
	}
	return min(d, c.maxB)
}

func validJob(j Job) error {
	if j.ID == "" || len(j.Steps) == 0 {
		return fmt.Errorf("engine: job %q with %d steps: %w", j.ID, len(j.Steps), ErrInvalidJob)
	}
	return nil
}

func sameJob(a, b Job) bool {
	return a.ID == b.ID && a.Account == b.Account && slices.Equal(a.Steps, b.Steps)
}

func cloneJob(j Job) Job {
	j.Steps = slices.Clone(j.Steps)
	return j
}

func newRec(j Job, now int64) *jobRec {
	return &jobRec{Job: cloneJob(j), State: task.JobQueued, Until: now}
}

func (r *jobRec) unfinished() bool { return r.State == task.JobQueued || r.State == task.JobLeased }

func (r *jobRec) visible(now int64) bool { return r.unfinished() && r.Until <= now }

func (r *jobRec) lease() Lease {
	return Lease{Job: cloneJob(r.Job), Token: r.Token, Worker: r.Worker, Delivery: r.Deliveries, Step: r.Step, Expires: msTime(r.Until)}
}

func (r *jobRec) info() Info {
	return Info{Job: cloneJob(r.Job), State: r.State, Deliveries: r.Deliveries, Step: r.Step, Token: r.Token,
		Until: msTime(r.Until), LastError: r.LastError, Reason: r.Reason}
}

// take handles one visible job for a Lease: it dead-letters a job whose last
// delivery ended (false), or leases it with tok (true).
func (c config) take(r *jobRec, worker string, now int64, tok Token) bool {
	if r.Deliveries >= c.max {
		r.State, r.Until, r.Reason = task.JobDead, 0, task.ReasonMaxDeliveries
		return false
	}
	r.State = task.JobLeased
	r.Deliveries++
	r.Token = tok
	r.Worker = worker
	r.Until = now + c.vis.Milliseconds()
	return true
}

// holds reports whether l is r's current lease at now.
func (r *jobRec) holds(l Lease, now int64) bool {
	return r.State == task.JobLeased && l.Token != 0 && r.Token == l.Token && now < r.Until
}

func lost(op string, l Lease) error {
	return fmt.Errorf("engine: %s %s with token %d: %w", op, l.Job.ID, l.Token, ErrLeaseLost)
}

func (c config) checkpoint(r *jobRec, step int, now int64) {
	r.Step = step
	r.Until = now + c.vis.Milliseconds()
}

func (c config) complete(r *jobRec) {
	r.State, r.Until = task.JobDone, 0
}

func (c config) fail(r *jobRec, cause error, now int64) {
	if cause == nil {
		cause = errors.New("failure without a cause")
	}
	r.LastError = cause.Error()
	switch {
	case errors.Is(cause, ErrPermanent):
		r.State, r.Until, r.Reason = task.JobDead, 0, ReasonPermanent
	case r.Deliveries >= c.max:
		r.State, r.Until, r.Reason = task.JobDead, 0, task.ReasonMaxDeliveries
	default:
		r.State = task.JobQueued
		r.Until = now + c.backoff(r.Deliveries).Milliseconds()
	}
}

// ReasonPermanent is re-exported for the backends.
const ReasonPermanent = task.ReasonPermanent

func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: %s: %w", op, err)
	}
	return nil
}

// Memory is a backend in the process's memory. Its jobs are lost with the
// process; it is safe for concurrent use by many goroutines.
type Memory struct {
	cfg config

	mu         sync.Mutex
	jobs       map[string]*jobRec
	order      map[string]int64 // submission sequence, to break no ties deterministically
	seq        int64
	lastToken  Token
	unfinished int
}

// NewMemory returns an empty in-memory backend, or an error wrapping
// ErrInvalidOptions.
func NewMemory(o Options) (*Memory, error) {
	c, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	return &Memory{cfg: c, jobs: map[string]*jobRec{}, order: map[string]int64{}}, nil
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
	if r, ok := m.jobs[j.ID]; ok {
		if sameJob(r.Job, j) {
			return false, nil
		}
		return false, fmt.Errorf("engine: submit %q: %w", j.ID, ErrConflict)
	}
	if m.unfinished >= m.cfg.capacity {
		return false, fmt.Errorf("engine: submit %q: %d unfinished jobs: %w", j.ID, m.unfinished, ErrFull)
	}
	m.jobs[j.ID] = newRec(j, m.cfg.nowMs())
	m.seq++
	m.order[j.ID] = m.seq
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
	now := m.cfg.nowMs()
	var vis []*jobRec
	for _, r := range m.jobs {
		if r.visible(now) {
			vis = append(vis, r)
		}
	}
	slices.SortFunc(vis, func(a, b *jobRec) int {
		return cmp.Or(cmp.Compare(a.Until, b.Until), cmp.Compare(m.order[a.Job.ID], m.order[b.Job.ID]))
	})
	for _, r := range vis {
		if m.cfg.take(r, worker, now, m.lastToken+1) {
			m.lastToken++
			return r.lease(), nil
		}
		m.unfinished--
	}
	return Lease{}, fmt.Errorf("engine: lease for %s: %w", worker, ErrNoJob)
}

// current returns the record l is the current lease of, under m.mu.
func (m *Memory) current(op string, l Lease, now int64) (*jobRec, error) {
	r, ok := m.jobs[l.Job.ID]
	if !ok || !r.holds(l, now) {
		return nil, lost(op, l)
	}
	return r, nil
}

// Checkpoint records that step steps of l's job are done and renews the
// lease from now. ErrLeaseLost unless l is the job's current lease.
func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	if err := ctxErr(ctx, "checkpoint"); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.nowMs()
	r, err := m.current("checkpoint", l, now)
	if err != nil {
		return Lease{}, err
	}
	m.cfg.checkpoint(r, step, now)
	return r.lease(), nil
}

// Complete marks l's job done. ErrLeaseLost unless l is the current lease.
func (m *Memory) Complete(ctx context.Context, l Lease) error {
	if err := ctxErr(ctx, "complete"); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.current("complete", l, m.cfg.nowMs())
	if err != nil {
		return err
	}
	m.cfg.complete(r)
	m.unfinished--
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
	now := m.cfg.nowMs()
	r, err := m.current("fail", l, now)
	if err != nil {
		return err
	}
	m.cfg.fail(r, cause, now)
	if !r.unfinished() {
		m.unfinished--
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
		return Info{}, fmt.Errorf("engine: inspect %q: %w", id, ErrUnknownJob)
	}
	return r.info(), nil
}
