// Package checkpointsuite is the conformance suite of lab 08 (checkpointed
// resumption). Run checks a fenced checkpoint store and a runner that
// executes a task's ordered steps from its last checkpoint: each step's
// effect applied under a key derived from the task, the checkpoint committed
// only once the effect is durable, the values a step drew replayed when it
// runs again, and a runner whose token is stale stopped by the store. The
// lab's test file, the reference solution's test file and the grader all
// call it the same way:
//
//	func TestCheckpoint(t *testing.T) { checkpointsuite.Run(t, NewStore, NewRunner) }
//
// The suite plays the durable storage under the student's store (a KV that
// can fail any call, and holds a Get still when a case asks), the effect
// service (idempotent by key, refusing a key reused with another payload),
// the clock and the random source, and the worker processes that run the
// student's runners. A process crashes at any point of a step (while the
// step computes, before or after the commit of its values, before or after
// its effect, before or after its checkpoint): its runner's call into the
// suite's store or sink never returns, as if the process had died there,
// and a new process with a higher token resumes the task, often hours
// later on virtual time. A process can also pause there and wake up as a
// zombie after another took over. Every call and its answer goes into the
// case's timeline.
//
// Every case builds its own store, runners and processes inside the case's
// bubble (see package suites), so a runner or a store may start goroutines
// in its constructor. If one has a Close method, the suite calls it when
// the case ends.
//
// The types the runner and the store share with the suite (Checkpoint,
// RecordedValue, TaskStep, RunProgress, RunnerOptions and the errors) are
// those of package task, which the lab's package re-exports.
package checkpointsuite

import (
	"context"
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Store is the checkpoint store lab 08 builds, as the suite sees it.
type Store = task.CheckpointStore

// Runner is the runner lab 08 builds, as the suite sees it.
type Runner interface {
	// Run runs the steps of taskID from its last checkpoint.
	Run(ctx context.Context, taskID string, steps []task.TaskStep) error

	// Progress reports how far the runner has taken its task.
	Progress() task.RunProgress
}

// Run runs lab 08's suite. newStore builds a store over the KV it is
// given; newRunner builds a runner with the options it is given, and is
// passed options a runner must refuse, too. The suite calls both at least
// once per case.
func Run[S Store, R Runner](t *testing.T, newStore func(task.CheckpointKV) S, newRunner func(task.RunnerOptions) (R, error)) {
	t.Helper()
	if newStore == nil || newRunner == nil {
		t.Fatal("checkpointsuite.Run: newStore or newRunner is nil; pass your NewStore and NewRunner")
	}
	suites.Run(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
		return &target{
			t: t,
			h: h,
			buildStore: func(kv task.CheckpointKV) Store {
				s := newStore(kv)
				suites.CloseAtEnd(t, s)
				return s
			},
			buildRunner: func(o task.RunnerOptions) (Runner, error) {
				r, err := newRunner(o)
				if err != nil {
					return nil, err
				}
				suites.CloseAtEnd(t, r)
				return r, nil
			},
		}
	})
}
