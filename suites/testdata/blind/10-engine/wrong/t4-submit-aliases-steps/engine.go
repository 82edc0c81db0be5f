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

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

// The types the engine shares with the suite.
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

	// ErrNotImplemented is what the starter returns.
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

// stepKey is the idempotency key of step i of the job with the given ID: a
// digest of the ID (so any ID, of any length or bytes, makes a valid key)
// and the index.
func stepKey(jobID string, i int) string {
	sum := sha256.Sum256([]byte(jobID))
	return fmt.Sprintf("job-%s-step-%d", hex.EncodeToString(sum[:16]), i)
}

// Work leases one job for worker and runs its remaining steps.
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
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("engine: work on %s step %d: %w", l.Job.ID, i, cerr)
		}
		if err != nil {
			var cause error
			if provider.Retryable(err) {
				cause = fmt.Errorf("step %d: %w", i, err)
			} else {
				cause = fmt.Errorf("step %d: %w: %w", i, ErrPermanent, err)
			}
			return e.backend.Fail(ctx, l, cause)
		}
		l, err = e.backend.Checkpoint(ctx, l, i+1)
		if err != nil {
			return err
		}
	}
	return e.backend.Complete(ctx, l)
}
