// Package engine is the durable agent task engine: a backend that keeps jobs
// (in memory, or in Redis so that they outlive every process), and workers
// that lease a job, run its steps against the signing provider and report
// the outcome.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

// The types the engine shares with the suite. They are defined in package
// task and re-exported here. Do not change them.
type (
	Job     = task.Job
	Step    = task.Step
	Lease   = task.JobLease
	Token   = task.Token
	Info    = task.JobInfo
	State   = task.JobState
	Options = task.BackendOptions
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

// config is Options with the defaults filled in.
type config struct {
	capacity      int
	visibility    time.Duration
	maxDeliveries int
	base, max     time.Duration
	now           func() time.Time
}

func newConfig(o Options) (config, error) {
	switch {
	case o.Capacity < 0:
		return config{}, fmt.Errorf("engine: negative Capacity %d: %w", o.Capacity, ErrInvalidOptions)
	case o.VisibilityTimeout < 0:
		return config{}, fmt.Errorf("engine: negative VisibilityTimeout %v: %w", o.VisibilityTimeout, ErrInvalidOptions)
	case o.VisibilityTimeout > task.MaxJobVisibilityTimeout:
		return config{}, fmt.Errorf("engine: VisibilityTimeout %v over %v: %w", o.VisibilityTimeout, task.MaxJobVisibilityTimeout, ErrInvalidOptions)
	case o.MaxDeliveries < 0:
		return config{}, fmt.Errorf("engine: negative MaxDeliveries %d: %w", o.MaxDeliveries, ErrInvalidOptions)
	case o.BaseBackoff < 0:
		return config{}, fmt.Errorf("engine: negative BaseBackoff %v: %w", o.BaseBackoff, ErrInvalidOptions)
	case o.MaxBackoff < 0:
		return config{}, fmt.Errorf("engine: negative MaxBackoff %v: %w", o.MaxBackoff, ErrInvalidOptions)
	}
	c := config{
		capacity:      o.Capacity,
		visibility:    o.VisibilityTimeout,
		maxDeliveries: o.MaxDeliveries,
		base:          o.BaseBackoff,
		max:           o.MaxBackoff,
		now:           o.Now,
	}
	if c.capacity == 0 {
		c.capacity = task.DefaultCapacity
	}
	if c.visibility == 0 {
		c.visibility = task.DefaultJobVisibility
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

// clock reads the injected clock, to the millisecond.
func (c config) clock() time.Time {
	return c.now()
}

// backoff is min(max, base*2^(n-1)), without overflow.
func (c config) backoff(n int) time.Duration {
	d := c.base
	for i := 1; i < n && d < c.max; i++ {
		if d > c.max/2 {
			return c.max
		}
		d *= 2
	}
	return min(d, c.max)
}

func validJob(j Job) error {
	if j.ID == "" {
		return fmt.Errorf("engine: job with an empty ID: %w", ErrInvalidJob)
	}
	if len(j.Steps) == 0 {
		return fmt.Errorf("engine: job %q has no steps: %w", j.ID, ErrInvalidJob)
	}
	return nil
}

func copyJob(j Job) Job {
	j.Steps = slices.Clone(j.Steps)
	return j
}

func sameContents(a, b Job) bool {
	return a.Account == b.Account && slices.Equal(a.Steps, b.Steps)
}

func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: %s: %w", op, err)
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

// stepKey is the idempotency key of step i of job id: a hash of the ID (any
// length, any bytes) and the index, so it is always a valid key and unique.
func stepKey(id string, i int) string {
	h := sha256.Sum256([]byte(id))
	return "job-" + hex.EncodeToString(h[:]) + "-step-" + strconv.Itoa(i)
}

// Work leases one job for worker and runs its remaining steps.
func (e *Engine) Work(ctx context.Context, worker string) error {
	l, err := e.backend.Lease(ctx, worker)
	if err != nil {
		return err
	}
	j := l.Job
	for i := l.Step; i < len(j.Steps); i++ {
		s := j.Steps[i]
		_, err := e.api.Send(ctx, j.Account, stepKey(j.ID, i), provider.SendRequest{
			DocumentID: s.DocumentID,
			Recipient:  s.Recipient,
			Subject:    s.Subject,
		})
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("engine: work on %s: %w", j.ID, cerr)
		}
		if err != nil {
			var cause error
			if provider.Retryable(err) {
				cause = fmt.Errorf("step %d: %w", i, err)
			} else {
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
