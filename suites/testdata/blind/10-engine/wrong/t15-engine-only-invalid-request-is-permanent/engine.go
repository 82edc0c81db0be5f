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
	"errors"
	"fmt"

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
	j := l.Job
	for i := l.Step; i < len(j.Steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("engine: work on %q: %w", j.ID, err)
		}
		st := j.Steps[i]
		_, err := e.api.Send(ctx, j.Account, stepKey(j.ID, i), provider.SendRequest{
			DocumentID: st.DocumentID,
			Recipient:  st.Recipient,
			Subject:    st.Subject,
		})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("engine: work on %q: step %d: %w", j.ID, i, cerr)
			}
			cause := fmt.Errorf("step %d: %w", i, err)
			if errors.Is(err, provider.ErrInvalidRequest) {
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
