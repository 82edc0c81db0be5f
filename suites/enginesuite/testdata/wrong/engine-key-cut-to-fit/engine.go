// Package engine is the durable agent task engine: a backend that keeps jobs
// (in memory, or in Redis so that they outlive every process), and workers
// that lease a job, run its steps against the signing provider and report
// the outcome.
//
// Lab 10, the capstone. Read README.md in this directory first, then make
// `go run ./cmd/labctl check 10` pass.
//
// Every guarantee of labs 01-09 meets here. A submission is idempotent by
// the job's ID and bounded by the backend's capacity. A worker leases a job
// for a visibility timeout, so a crashed worker's job comes back by itself,
// and gets a fencing token, so a worker that wakes up after its lease ended
// cannot write over its successor. The lease counts the delivery, so a job
// that keeps crashing its workers is dead-lettered as surely as one that
// keeps failing. A failure makes the job visible again after a backoff. The
// checkpoint after each step lets the next delivery resume where the last
// one stopped, and each step's provider call carries a key derived from the
// job and the step, so a step whose reply was lost is retried, not done
// twice.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

// The types the engine shares with the suite. They are defined in package
// task and re-exported here. Do not change them.
type (
	// Job is an agent's plan: steps run in order under one account.
	Job = task.Job
	// Step is one signing request of a job.
	Step = task.Step
	// Lease is one delivery of a job to a worker.
	Lease = task.JobLease
	// Token is a fencing token.
	Token = task.Token
	// Info is what Inspect reports about a job.
	Info = task.JobInfo
	// State is where a job stands.
	State = task.JobState
	// Options configure a backend.
	Options = task.BackendOptions
	// Backend is what workers and clients call; Memory and Redis implement it.
	Backend = task.JobBackend
)

// The errors of the engine, matched with errors.Is.
var (
	ErrNoJob          = task.ErrNoJob
	ErrFull           = task.ErrFull
	ErrConflict       = task.ErrConflict
	ErrInvalidJob     = task.ErrInvalidJob
	ErrUnknownJob     = task.ErrUnknownJob
	ErrLeaseLost      = task.ErrLeaseLost
	ErrInvalidOptions = task.ErrInvalidOptions
	ErrPermanent      = task.ErrPermanent

	// ErrNotImplemented is what the starter returns; the solution never does.
	ErrNotImplemented = errors.New("not implemented")
)

// config is Options with every default applied.
type config struct {
	capacity      int
	visibility    time.Duration
	maxDeliveries int
	baseBackoff   time.Duration
	maxBackoff    time.Duration
	now           func() time.Time
}

// resolve validates o and applies the defaults of the zero values.
func resolve(o Options) (config, error) {
	if o.Capacity < 0 || o.VisibilityTimeout < 0 || o.MaxDeliveries < 0 || o.BaseBackoff < 0 || o.MaxBackoff < 0 {
		return config{}, fmt.Errorf("%w: negative value in %+v", ErrInvalidOptions, o)
	}
	if o.VisibilityTimeout > task.MaxJobVisibilityTimeout {
		return config{}, fmt.Errorf("%w: visibility timeout %v is over %v", ErrInvalidOptions, o.VisibilityTimeout, task.MaxJobVisibilityTimeout)
	}
	c := config{
		capacity:      orDefault(o.Capacity, task.DefaultCapacity),
		visibility:    orDefault(o.VisibilityTimeout, task.DefaultJobVisibility),
		maxDeliveries: orDefault(o.MaxDeliveries, task.DefaultJobMaxDeliveries),
		baseBackoff:   orDefault(o.BaseBackoff, task.DefaultBaseBackoff),
		maxBackoff:    orDefault(o.MaxBackoff, task.DefaultMaxBackoff),
		now:           o.Now,
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// clock reads the configured clock, to the millisecond: the Redis backend
// keeps times as Unix milliseconds, and both backends agree on every instant.
func (c config) clock() time.Time {
	return c.now().Truncate(time.Millisecond)
}

// backoff is the delay after the delivery-th delivery failed:
// min(maxBackoff, baseBackoff*2^(delivery-1)), doubling without overflow.
func (c config) backoff(delivery int) time.Duration {
	d := c.baseBackoff
	for i := 1; i < delivery && d < c.maxBackoff; i++ {
		d *= 2
	}
	return min(d, c.maxBackoff)
}

// validJob reports whether j can be submitted.
func validJob(j Job) error {
	if j.ID == "" || len(j.Steps) == 0 {
		return fmt.Errorf("%w: a job needs an ID and at least one step (ID %q, %d steps)", ErrInvalidJob, j.ID, len(j.Steps))
	}
	return nil
}

// Engine runs jobs: each Work call is one worker's turn with one job.
type Engine struct {
	backend Backend
	api     provider.API
}

// NewEngine returns an engine whose workers lease jobs from b and run their
// steps at the provider api.
func NewEngine(b Backend, api provider.API) *Engine {
	return &Engine{backend: b, api: api}
}

// stepKey is the provider idempotency key of step i of job id: the same on
// every delivery of the job, in every process, and different for every
// other step and job (the step number after the last '#' parses back).
func stepKey(id string, i int) string {
	// The provider refuses keys over 255 bytes: keep the first 200 bytes
	// of the ID, which leaves room for the step.
	if len(id) > 200 {
		id = id[:200]
	}
	return id + "#" + strconv.Itoa(i)
}

// Work leases one job for worker and runs its remaining steps, from the
// lease's checkpoint on, checkpointing after each; then completes the job.
// A step the provider refused for good fails the job with ErrPermanent; any
// other provider error fails it for a retry after the backoff. Work returns
// nil when it recorded the job's outcome (done, or a failure); ErrNoJob when
// no job is visible; the error (wrapping ErrLeaseLost, or the backend's)
// when it could not record anything, and one wrapping ctx.Err() when ctx is
// done: the lease is then left to expire.
func (e *Engine) Work(ctx context.Context, worker string) error {
	l, err := e.backend.Lease(ctx, worker)
	if err != nil {
		return err
	}
	for i := l.Step; i < len(l.Job.Steps); i++ {
		s := l.Job.Steps[i]
		key := stepKey(l.Job.ID, i)
		_, err := e.api.Send(ctx, l.Job.Account, key, provider.SendRequest{
			DocumentID: s.DocumentID, Recipient: s.Recipient, Subject: s.Subject, Reference: key,
		})
		if err != nil {
			if ctx.Err() != nil {
				// Our own caller gave up: nothing is known about the step,
				// and the lease will bring the job back by itself.
				return fmt.Errorf("job %s step %d: %w", l.Job.ID, i, ctx.Err())
			}
			cause := fmt.Errorf("step %d: %w", i, err)
			if !provider.Retryable(err) {
				cause = fmt.Errorf("%w: %w", ErrPermanent, cause)
			}
			// A lost reply (ErrTimeout) is retryable: the next delivery
			// sends the same key, and the provider replays its answer.
			return e.backend.Fail(ctx, l, cause)
		}
		// The step's effect is durable at the provider: only now may the
		// checkpoint move past it. The checkpoint also renews the lease.
		renewed, err := e.backend.Checkpoint(ctx, l, i+1)
		if err != nil {
			return fmt.Errorf("job %s: checkpoint after step %d: %w", l.Job.ID, i, err)
		}
		l = renewed
	}
	return e.backend.Complete(ctx, l)
}
