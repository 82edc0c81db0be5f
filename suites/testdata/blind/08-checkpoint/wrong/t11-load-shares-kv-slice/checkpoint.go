// Package checkpoint runs a multi-step task so that a crash at any point
// costs nothing but the step in progress: each step's side effect is
// applied under an idempotency key derived from the task, a checkpoint is
// committed once the effect is durable, and a new runner resumes from the
// last checkpoint instead of from the start.
//
// Lab 08: checkpointed resumption. Read README.md in this directory first,
// then make `go run ./cmd/labctl check 8` pass.
//
// The scenario: an agent's task "book the venue, quote the customer, send
// the contract for signature" has three steps, each with an effect on the
// outside world. The worker running it can crash between any two
// instructions. Restarting from the first step books the venue twice;
// guessing where it stopped skips a step or repeats one. A durable
// checkpoint written after each step's effect, fenced so that a paused
// worker cannot overwrite a newer one, and the values each step drew (the
// time it quoted, the random discount code) kept with it, make recovery a
// matter of reading where the task stands.
package checkpoint

import (
	"github.com/fourth-outcome/labkit/task"
)

// The types the runner and the store share with the suite and the later
// labs. They are defined in package task and re-exported here. Do not
// change them.

// Checkpoint is the durable progress of one task: its next step, its
// number of steps, the token of the runner that wrote it and the values its
// steps drew.
type Checkpoint = task.Checkpoint

// RecordedValue is one value a step drew (a time or a random number), with
// the index of the step that drew it.
type RecordedValue = task.RecordedValue

// The kinds of recorded values.
const (
	RecordedTime = task.RecordedTime
	RecordedRand = task.RecordedRand
)

// KV is the plain durable storage a Store keeps its checkpoints in: Get
// and Put, each atomic on its own, with no conditional write.
type KV = task.CheckpointKV

// CheckpointStore is what a Runner commits its checkpoints to: a Store, or
// anything with the same two methods.
type CheckpointStore = task.CheckpointStore

// EffectSink is where the steps' effects go, idempotent by key.
type EffectSink = task.EffectSink

// Recorder is what a step asks for a time or a random number.
type Recorder = task.Recorder

// Step is one step of a task: a name and the function that computes its
// effect.
type Step = task.TaskStep

// Progress is how far a runner has taken its task.
type Progress = task.RunProgress

// Options configure a Runner.
type Options = task.RunnerOptions

// FencingToken is the number of a runner's grant of its task (lab 06).
type FencingToken = task.FencingToken

// The errors of a Runner and a Store, matched with errors.Is.
var (
	ErrStaleToken     = task.ErrStaleToken
	ErrInvalidRunner  = task.ErrInvalidRunner
	ErrNoTaskID       = task.ErrNoTaskID
	ErrEffectMismatch = task.ErrEffectMismatch
)
