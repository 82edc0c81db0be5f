// Package leasesuite is the conformance suite of lab 05 (lease-based
// checkout with visibility timeouts). Run checks a lease queue and a worker
// that takes tasks from one; the lab's test file, the reference solution's
// test file and the grader all call it the same way:
//
//	func TestLease(t *testing.T) { leasesuite.Run(t, New, NewWorker) }
//
// The queue cases call the student's queue directly, the way many workers
// would, on virtual time: a lease that should end at t=30s is checked at
// t=30s minus a nanosecond and at t=30s exactly, and again days later. The
// worker cases run the student's worker against a deliberately simple queue
// of the suite's own (refQueue), which records who held which lease and
// token when and what it accepted or refused, and which can fail, refuse or
// stall any call, so a worker is judged on its own behaviour and never on
// the student's queue.
//
// Every case gets a new queue, built inside the case's bubble (see package
// suites), so a queue may start goroutines in its constructor: an actor that
// owns the tasks works as well as a map behind a mutex. If the queue has a
// Close method, the suite calls it when the case ends.
//
// The types a queue and a worker share with the suite (Task, Lease,
// LeaseToken, LeaseQueue, QueueOptions, WorkerOptions, Handler and the
// errors) are those of package task, which the lab's package re-exports.
package leasesuite

import (
	"context"
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Queue is the lease queue lab 05 builds, as the suite sees it: the
// consumer side every worker calls, and Enqueue.
type Queue interface {
	task.LeaseQueue

	// Enqueue adds a task, visible at once.
	Enqueue(ctx context.Context, t task.Task) error
}

// Runner is the worker lab 05 builds, as the suite sees it.
type Runner interface {
	// Run takes tasks and works on them until ctx is done or the queue
	// fails.
	Run(ctx context.Context) error
}

// Run runs lab 05's suite. newQueue builds a new, empty queue (the suite
// calls it at least once per case); newWorker builds a worker over the
// queue it is given, which in the worker cases is the suite's own.
func Run[Q Queue, W Runner](t *testing.T, newQueue func(task.QueueOptions) (Q, error), newWorker func(task.LeaseQueue, task.WorkerOptions, task.Handler) W) {
	t.Helper()
	if newQueue == nil || newWorker == nil {
		t.Fatal("leasesuite.Run: a constructor is nil; pass your New and NewWorker")
	}
	suites.Run(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
		return newTarget(t, h,
			func(o task.QueueOptions) (Queue, error) {
				q, err := newQueue(o)
				if err != nil {
					return nil, err
				}
				suites.CloseAtEnd(t, q)
				return q, nil
			},
			func(q task.LeaseQueue, o task.WorkerOptions, handle task.Handler) Runner {
				return newWorker(q, o, handle)
			})
	})
}
