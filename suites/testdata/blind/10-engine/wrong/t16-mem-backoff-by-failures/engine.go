// Package engine is the durable agent task engine: a backend that keeps jobs
// (in memory, or in Redis so that they outlive every process), and workers
// that lease a job, run its steps against the signing provider and report
// the outcome.
//
// Lab 10, the capstone. Read README.md in this directory first, then make
// `go run ./cmd/labctl check 10` pass.
//
// Every guarantee of labs 01-09 meets here: idempotent, bounded submission;
// leases with a visibility timeout; fencing tokens; retries with backoff;
// dead-lettering by delivery count; checkpointed resumption; and a provider
// call per step that a lost reply cannot turn into two.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	// ErrNotImplemented is what the starter returns. Replace every use.
	ErrNotImplemented = errors.New("not implemented")
)

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

// Work leases one job for worker and runs its remaining steps, from the
// lease's checkpoint on, checkpointing after each; then completes the job.
// Each step is one Send under the job's account, with an idempotency key
// that is the same on every delivery of the job and different for every
// other step and job. A step the provider refused for good fails the job
// with a cause wrapping ErrPermanent; any other provider error fails it for
// a retry after the backoff. Work returns nil when it recorded the job's
// outcome (done, or a failure); ErrNoJob when no job is visible; an error
// wrapping ErrLeaseLost (it stops at once) or the backend's error when it
// could not record anything; and an error wrapping ctx.Err() when ctx is
// done, without reporting anything: the lease is left to expire.
func (e *Engine) Work(ctx context.Context, worker string) error {
	l, err := e.backend.Lease(ctx, worker)
	if err != nil {
		return err
	}
	for i := l.Step; i < len(l.Job.Steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("work %s: %w", l.Job.ID, err)
		}
		s := l.Job.Steps[i]
		_, err := e.api.Send(ctx, l.Job.Account, stepKey(l.Job.ID, i), provider.SendRequest{
			DocumentID: s.DocumentID,
			Recipient:  s.Recipient,
			Subject:    s.Subject,
		})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("work %s: %w", l.Job.ID, cerr)
			}
			cause := fmt.Errorf("step %d: %w", i, err)
			if !provider.Retryable(err) {
				cause = fmt.Errorf("step %d: %w: %w", i, ErrPermanent, err)
			}
			if ferr := e.backend.Fail(ctx, l, cause); ferr != nil {
				return ferr
			}
			return nil
		}
		l, err = e.backend.Checkpoint(ctx, l, i+1)
		if err != nil {
			return err
		}
	}
	return e.backend.Complete(ctx, l)
}

// stepKey derives the idempotency key of step i of the job id: the ID is
// hashed, so the key always fits the provider's rules and two IDs never
// share a key.
func stepKey(id string, i int) string {
	h := sha256.Sum256([]byte(id))
	return "job-" + hex.EncodeToString(h[:]) + "-step-" + strconv.Itoa(i)
}

// config is the resolved options of a backend.
type config struct {
	capacity      int
	vis           time.Duration
	maxDeliveries int
	base, max     time.Duration
	now           func() time.Time
}

func resolve(o Options) (config, error) {
	if o.Capacity < 0 || o.VisibilityTimeout < 0 || o.MaxDeliveries < 0 || o.BaseBackoff < 0 || o.MaxBackoff < 0 {
		return config{}, fmt.Errorf("%w: negative option", ErrInvalidOptions)
	}
	if o.VisibilityTimeout > task.MaxJobVisibilityTimeout {
		return config{}, fmt.Errorf("%w: visibility timeout %v over %v", ErrInvalidOptions, o.VisibilityTimeout, task.MaxJobVisibilityTimeout)
	}
	c := config{o.Capacity, o.VisibilityTimeout, o.MaxDeliveries, o.BaseBackoff, o.MaxBackoff, o.Now}
	if c.capacity == 0 {
		c.capacity = task.DefaultCapacity
	}
	if c.vis == 0 {
		c.vis = task.DefaultJobVisibility
	}
	if c.maxDeliveries == 0 {
		c.maxDeliveries = task.DefaultJobMaxDeliveries
	}
	if c.base == 0 {
		c.base = task.DefaultBaseBackoff
	}
	if c.max == 0 {
		c.max = task.DefaultMaxBackoff
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

func (c config) clock() time.Time { return c.now().Truncate(time.Millisecond) }

// backoff is min(max, base*2^(n-1)), without overflow.
func (c config) backoff(n int) time.Duration {
	d := c.base
	for i := 1; i < n && d < c.max; i++ {
		if d > c.max/2 {
			d = c.max
			break
		}
		d *= 2
	}
	return min(d, c.max)
}

func validJob(j Job) error {
	if j.ID == "" || len(j.Steps) == 0 {
		return fmt.Errorf("%w: empty ID or no steps", ErrInvalidJob)
	}
	return nil
}

func sameJob(a, b Job) bool {
	if a.ID != b.ID || a.Account != b.Account || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i := range a.Steps {
		if a.Steps[i] != b.Steps[i] {
			return false
		}
	}
	return true
}

func copyJob(j Job) Job {
	j.Steps = append([]Step(nil), j.Steps...)
	return j
}

func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
