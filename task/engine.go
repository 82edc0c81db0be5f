package task

// The durable agent task engine (lab 10, the capstone): a backend that keeps
// jobs durably (in memory, or in Redis) and the workers that run them. A job
// is a plan of steps, each one a signing request at the provider. The
// backend brings together what labs 01-09 taught one at a time: submission
// is idempotent by the job's ID and bounded by a capacity; a worker leases a
// job for a visibility timeout and gets a fencing token greater than every
// token before it; only the current token checkpoints, completes or fails
// the job; a failure makes the job visible again after a backoff; the
// delivery count, kept by the lease and not by the failure, dead-letters a
// job that keeps failing or keeps crashing its workers, with the reason.
//
// Lab 05's Lease.Attempt and lab 07's Message.Deliveries are the same
// count; the capstone calls it JobLease.Delivery. Lab 06's fencing token is
// JobLease.Token. A backend reuses lab 05's ErrLeaseLost (a token that is
// not the job's current lease: expired, superseded by a greater token, or
// already ended by Complete or Fail) and lab 07's ErrInvalidOptions (a
// negative option, or a visibility timeout over MaxJobVisibilityTimeout).

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The defaults of a job backend (BackendOptions left zero).
const (
	DefaultCapacity         = 100
	DefaultJobVisibility    = 30 * time.Second
	DefaultJobMaxDeliveries = 5
	DefaultBaseBackoff      = time.Second
	DefaultMaxBackoff       = 5 * time.Minute
	MaxJobVisibilityTimeout = 12 * time.Hour
)

// The errors of a job backend and an engine, matched with errors.Is.
var (
	// ErrNoJob means no job is visible right now: none was submitted, or
	// every unfinished job is leased or waiting out its backoff.
	ErrNoJob = errors.New("no visible job")

	// ErrFull means the backend already holds Capacity unfinished jobs: the
	// submission was rejected and nothing of it was stored.
	ErrFull = errors.New("backend full")

	// ErrConflict means a job with the same ID but different contents was
	// submitted before: the ID is the job's idempotency key, and reusing it
	// for other work is a mistake the caller must hear about.
	ErrConflict = errors.New("job ID reused with different contents")

	// ErrInvalidJob means a job cannot be submitted: its ID is empty or it
	// has no steps.
	ErrInvalidJob = errors.New("invalid job")

	// ErrUnknownJob means Inspect was asked about an ID never submitted (or
	// whose submission was rejected).
	ErrUnknownJob = errors.New("unknown job")

	// ErrPermanent, wrapped in the cause given to Fail, means the failure
	// will not go away by retrying (the provider refused the request as
	// invalid): the job is dead-lettered at once.
	ErrPermanent = errors.New("permanent failure")
)

// ReasonPermanent: the job was dead-lettered because a failure wrapping
// ErrPermanent was reported. (ReasonMaxDeliveries, of lab 07, is the other
// reason a job is dead-lettered.)
const ReasonPermanent DeadLetterReason = "permanent failure"

// Step is one step of a job: a signing request at the provider.
type Step struct {
	DocumentID string
	Recipient  string
	Subject    string
}

// Job is what a client submits: an agent's plan of steps, run in order,
// under one provider account.
type Job struct {
	// ID names the job and is its idempotency key: a second submission
	// with the same ID and the same contents is the same job.
	ID string

	// Account is the provider account the steps run under.
	Account string

	// Steps are the steps, in order. A job has at least one.
	Steps []Step
}

// Token is a fencing token: every lease a backend grants carries a token
// greater than every token it granted before, for any job.
type Token int64

// JobLease is one delivery of a job to one worker. The job is invisible to
// every other worker while the backend's clock is before Expires.
type JobLease struct {
	Job Job

	// Token is this delivery's fencing token. Only the current lease's
	// token checkpoints, completes or fails the job.
	Token Token

	// Worker is the name of the worker the job was leased to.
	Worker string

	// Delivery counts the deliveries of the job, this one included: 1 for
	// the first lease, 2 for the next, and so on.
	Delivery int

	// Step is the job's checkpoint when it was leased: how many of its
	// steps are done. The worker resumes at Job.Steps[Step].
	Step int

	// Expires is when the lease ends unless a checkpoint renews it.
	Expires time.Time
}

// String renders the lease for timelines: "job-1 to w1 (delivery 2, token 7, step 1)".
func (l JobLease) String() string {
	return fmt.Sprintf("%s to %s (delivery %d, token %d, step %d)", l.Job.ID, l.Worker, l.Delivery, l.Token, l.Step)
}

// JobState is where a job stands in the backend.
type JobState string

// The states of a job.
const (
	// JobQueued: waiting to be leased, visible from JobInfo.Until on (at
	// once after a submission, after a backoff after a failure).
	JobQueued JobState = "queued"

	// JobLeased: delivered to a worker; the lease holds until JobInfo.Until.
	// A job whose lease has ended stays JobLeased until the next Lease call
	// delivers it again or dead-letters it.
	JobLeased JobState = "leased"

	// JobDone: completed by its current lease. Final.
	JobDone JobState = "done"

	// JobDead: dead-lettered, with a Reason. Final: never delivered again.
	JobDead JobState = "dead"
)

// JobInfo is what a backend reports about one job (Inspect).
type JobInfo struct {
	Job   Job
	State JobState

	// Deliveries counts the job's leases so far.
	Deliveries int

	// Step is the job's checkpoint: how many of its steps are done.
	Step int

	// Token is the token of the job's latest lease (0 if never leased).
	Token Token

	// Until is when a queued job becomes visible, or when a leased job's
	// lease ends; zero for a done or dead job.
	Until time.Time

	// LastError is the text of the cause of the last Fail; empty when none
	// was reported.
	LastError string

	// Reason says why a dead job was dead-lettered; empty otherwise.
	Reason DeadLetterReason
}

// String renders the job's state for timelines:
// `job-1 queued (2 deliveries, step 1, token 4, last error "timeout")`.
func (j JobInfo) String() string {
	s := fmt.Sprintf("%s %s (%d deliveries, step %d, token %d", j.Job.ID, j.State, j.Deliveries, j.Step, j.Token)
	if j.LastError != "" {
		s += fmt.Sprintf(", last error %q", j.LastError)
	}
	if j.Reason != "" {
		s += fmt.Sprintf(", reason %q", j.Reason)
	}
	return s + ")"
}

// BackendOptions configure a job backend.
type BackendOptions struct {
	// Capacity is how many unfinished (queued or leased) jobs the backend
	// holds at most. Zero means DefaultCapacity.
	Capacity int

	// VisibilityTimeout is how long a lease (or a checkpoint's renewal)
	// lasts. Zero means DefaultJobVisibility.
	VisibilityTimeout time.Duration

	// MaxDeliveries is how many times a job is delivered at most. Zero
	// means DefaultJobMaxDeliveries.
	MaxDeliveries int

	// BaseBackoff and MaxBackoff shape the delay after a failure: after
	// the n-th delivery failed, the job is visible again
	// min(MaxBackoff, BaseBackoff*2^(n-1)) later. Zero means
	// DefaultBaseBackoff and DefaultMaxBackoff.
	BaseBackoff time.Duration
	MaxBackoff  time.Duration

	// Now is the backend's clock, the only one it reads. Nil means
	// time.Now. Times are kept to the millisecond.
	Now func() time.Time
}

// JobBackend is what the engine's workers and clients call. Every method is
// safe for concurrent use (and, for a Redis backend, from several processes
// at once), never waits for a job to appear, and returns an error wrapping
// ctx.Err() when ctx is done, having changed nothing.
type JobBackend interface {
	// Submit stores a new job, visible at once, and returns true; or,
	// for a job submitted before with the same ID and contents, changes
	// nothing and returns false.
	Submit(ctx context.Context, j Job) (bool, error)

	// Lease delivers the visible job that became visible first to worker,
	// or returns ErrNoJob.
	Lease(ctx context.Context, worker string) (JobLease, error)

	// Checkpoint records that step steps of the job are done and renews
	// the lease from now; it returns the renewed lease (Step is step,
	// Expires is now plus the visibility timeout).
	Checkpoint(ctx context.Context, l JobLease, step int) (JobLease, error)

	// Complete marks the job done and ends the lease.
	Complete(ctx context.Context, l JobLease) error

	// Fail ends the lease with cause: the job is visible again after the
	// backoff, or dead-lettered.
	Fail(ctx context.Context, l JobLease, cause error) error

	// Inspect reports the job with the given ID.
	Inspect(ctx context.Context, id string) (JobInfo, error)
}
