// Package ambiguoussuite is the conformance suite of lab 03 (the signing
// provider and the crash boundary). Run checks any worker that processes
// "send this document for signature" tasks; the lab's test file, the
// reference solution's test file and the grader all call it the same way:
//
//	func TestAmbiguous(t *testing.T) { ambiguoussuite.Run(t, New) }
//
// Each case builds a small system around the worker: the fake signing
// provider (package provider), a durable Store, and a queue that delivers
// every task at least once. It then makes things go wrong: the provider
// loses responses, answers "in progress", forgets keys after its retention
// window; the worker process crashes at a chosen point and is replaced by a
// new one, built by the worker's constructor over the same store. Crashes
// are injected through the dependencies the worker is given (the store, the
// provider, the queue's Ack), so they land wherever the worker's own code
// happens to call them. At the end the suite counts what each customer
// actually received, and reads the task's durable record.
//
// The types a worker shares with the suite (Task, Delivery, Record, Store,
// Deps) are those of package task, which the lab's package re-exports.
package ambiguoussuite

import (
	"context"
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Worker is what lab 03 builds, as the suite sees it.
type Worker interface {
	// Process handles one delivery of a task.
	Process(ctx context.Context, d task.Delivery) error
}

// Run runs lab 03's suite. newWorker builds one worker process from its
// dependencies; the suite calls it at the start of every case and again
// after every crash, with the same provider, Store and NewID, so anything
// the worker kept in memory is gone and anything it saved in the Store is
// not.
func Run[W Worker](t *testing.T, newWorker func(task.Deps) W) {
	t.Helper()
	if newWorker == nil {
		t.Fatal("ambiguoussuite.Run: newWorker is nil; pass your constructor, New")
	}
	suites.Run(t, Lab, tests, func(*testing.T, *suites.History) constructor {
		return func(d task.Deps) Worker { return newWorker(d) }
	})
}

// The types a worker shares with the suite, under the names by which this
// package defined them before they moved to package task, so that a worker
// written against an earlier kit (its type aliases naming this package)
// still compiles and is graded the same.
//
// Deprecated: use package task, as the starter does.
type (
	Task     = task.Task
	Delivery = task.Delivery
	Record   = task.Record
	State    = task.State
	Store    = task.Store
	Deps     = task.Deps
)

// The states of a Record, under their earlier names.
//
// Deprecated: use package task, as the starter does.
const (
	Pending = task.Pending
	Sent    = task.Sent
	Failed  = task.Failed
)
