package task

// Checkpointed resumption (lab 08): a runner that executes a task's ordered
// steps, applies each step's side effect under an idempotency key derived
// from the task's ID, commits a checkpoint after each effect is durable, and
// resumes a task from its last checkpoint after a crash instead of from the
// start. The checkpoint also keeps the values the steps drew (the time, a
// random number), so that a step run again after a crash gets the same ones.
// Checkpoint writes are fenced with lab 06's tokens, so a runner that was
// paused and woke up after another took the task over cannot move the
// task's progress backwards. The capstone's worker checkpoints this way.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The errors of a checkpointed runner and its store, matched with
// errors.Is. A refused checkpoint write is ErrStaleToken (fencing.go); an
// empty task ID is ErrNoTaskID (deadletter.go).
var (
	// ErrInvalidRunner means a runner was configured without a store, an
	// effect sink or a fencing token.
	ErrInvalidRunner = errors.New("invalid runner options")

	// ErrEffectMismatch means an effect sink was asked to apply an
	// idempotency key it has applied before, with a different payload:
	// the step that sent it computed something else the second time. The
	// sink applied nothing.
	ErrEffectMismatch = errors.New("idempotency key reused with a different payload")
)

// RecordedKind says what a recorded value is.
type RecordedKind string

// The kinds of recorded values.
const (
	RecordedTime RecordedKind = "time" // Recorder.Now
	RecordedRand RecordedKind = "rand" // Recorder.Rand
)

// RecordedValue is one value a step drew from its Recorder, as the
// checkpoint keeps it: which step drew it, what kind it is, and the value
// itself.
type RecordedValue struct {
	Step int          // the index of the step that drew it, from 0
	Kind RecordedKind // RecordedTime or RecordedRand
	Time time.Time    // the time, for RecordedTime
	Rand uint64       // the number, for RecordedRand
}

// String renders the value for timelines: "step 1 rand 42".
func (v RecordedValue) String() string {
	if v.Kind == RecordedTime {
		return fmt.Sprintf("step %d time %s", v.Step, v.Time.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("step %d %s %d", v.Step, v.Kind, v.Rand)
}

// Checkpoint is the durable progress of one task: how many of its steps are
// done, and every value its steps drew.
type Checkpoint struct {
	TaskID string

	// Token is the fencing token of the runner that wrote the checkpoint.
	Token FencingToken

	// Next is the index of the next step to run: steps 0 to Next-1 are
	// done, and their effects are durable. Next equals Total when the task
	// is finished.
	Next int

	// Total is the number of steps of the task, so that whoever reads the
	// checkpoint can tell how far along it is.
	Total int

	// Values are the values the task's steps drew, in the order they were
	// drawn, each with the step that drew it. The values of step Next, if
	// any, were drawn by a run of that step whose effect may or may not
	// have been applied: a run of the step again gets them back.
	Values []RecordedValue
}

// String renders the checkpoint for timelines:
// "task-1 at step 2 of 3 (token 7, values: step 0 rand 42)".
func (c Checkpoint) String() string {
	s := fmt.Sprintf("%s at step %d of %d (token %d", c.TaskID, c.Next, c.Total, c.Token)
	if len(c.Values) > 0 {
		parts := make([]string, len(c.Values))
		for i, v := range c.Values {
			parts[i] = v.String()
		}
		s += ", values: " + strings.Join(parts, "; ")
	}
	return s + ")"
}

// CheckpointKV is the plain durable storage a checkpoint store keeps its
// checkpoints in, one per task ID. Each call is atomic on its own and
// nothing more: there is no conditional write, so a store that reads a
// task's token with Get and writes with Put must make sure nobody writes the
// task in between. Either call can fail; both return an error wrapping
// ctx.Err() when ctx is done.
type CheckpointKV interface {
	// Get returns the checkpoint of taskID, and false when none was ever
	// put.
	Get(ctx context.Context, taskID string) (Checkpoint, bool, error)

	// Put replaces the checkpoint of cp.TaskID with cp. When it returns
	// nil, cp is stored; when it returns an error, cp may or may not be.
	// Put may keep cp.Values as it is, and Get may return the slice it
	// keeps (an in-memory KV does): copying is the store's job.
	Put(ctx context.Context, cp Checkpoint) error
}

// CheckpointStore keeps the checkpoint of every task, fenced: it refuses a
// checkpoint whose token is lower than the token of the checkpoint it holds
// for the same task. Its methods are safe for concurrent use and return an
// error wrapping ctx.Err() when ctx is done, having changed nothing.
type CheckpointStore interface {
	// Load returns the checkpoint of taskID, and false when none was ever
	// committed.
	Load(ctx context.Context, taskID string) (Checkpoint, bool, error)

	// Commit stores cp as the checkpoint of cp.TaskID if cp.Token is not
	// zero and at least the token of the checkpoint the task has;
	// ErrStaleToken otherwise. The check and the write are one atomic
	// step.
	Commit(ctx context.Context, cp Checkpoint) error
}

// EffectSink is where the steps' side effects go: the provider, the mailer,
// the payment API. It is idempotent by key: the first Apply of a key
// performs the effect; a later Apply of the same key with the same payload
// performs nothing and returns nil; one with a different payload performs
// nothing and returns ErrEffectMismatch.
type EffectSink interface {
	// Apply performs the effect payload under the idempotency key key.
	// When it returns nil, the effect is durable; when it returns an
	// error, it may or may not have been performed.
	Apply(ctx context.Context, key, payload string) error
}

// Recorder is what a step asks for the values it must not recompute when it
// runs again: the time, a random number. The first run of a step draws them
// from the runner's clock and source; every later run of the same step gets
// the same values back, in the same order.
type Recorder interface {
	Now() time.Time
	Rand() uint64
}

// TaskStep is one step of a multi-step task.
type TaskStep struct {
	// Name names the step in progress reports and timelines. Names need
	// not be unique.
	Name string

	// Effect computes the step's side effect, the payload the runner
	// applies to the effect sink. It must be deterministic given the
	// values it asks rec for (and ask for them in the same order every
	// time), and do nothing else: the runner, not the step, applies the
	// effect. An error means the step failed; nothing is applied.
	Effect func(rec Recorder) (payload string, err error)
}

// RunProgress is how far a runner has taken its task, for an operator.
type RunProgress struct {
	TaskID string

	// Total is the number of steps of the task.
	Total int

	// Completed is the number of steps whose checkpoint the runner knows
	// is committed, those done before it resumed included. While Running,
	// step Completed is the one in progress.
	Completed int

	// ResumedFrom is the step the runner started from: the Next of the
	// checkpoint it loaded, 0 for a task that had none.
	ResumedFrom int

	// Running is true while Run is executing the task.
	Running bool
}

// String renders the progress for timelines:
// "task-1: 2 of 3 steps done (resumed from 1, running)".
func (p RunProgress) String() string {
	state := "stopped"
	if p.Running {
		state = "running"
	}
	return fmt.Sprintf("%s: %d of %d steps done (resumed from %d, %s)", p.TaskID, p.Completed, p.Total, p.ResumedFrom, state)
}

// RunnerOptions configure a checkpointed runner.
type RunnerOptions struct {
	// Store keeps the checkpoints. Required.
	Store CheckpointStore

	// Sink receives the steps' effects. Required.
	Sink EffectSink

	// Token is the fencing token of this runner's grant of the task (from
	// the lock service or the lease); every checkpoint it commits carries
	// it. Required: zero is never granted.
	Token FencingToken

	// Now is the clock a step's Recorder.Now draws from. Nil means
	// time.Now.
	Now func() time.Time

	// Rand is the source a step's Recorder.Rand draws from. Nil means
	// math/rand/v2's Uint64.
	Rand func() uint64
}
