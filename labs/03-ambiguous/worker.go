// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
//
// Lab 03: the signing provider and the crash boundary. Read README.md in
// this directory first, then make `go run ./cmd/labctl check 3` pass.
//
// The scenario: an orchestration worker takes tasks from a queue that
// delivers at least once, and sends each task's document to a third-party
// signing provider (package provider). The provider may commit a request
// and lose its answer; the worker may crash at any point and be replaced by
// a new process that remembers only what it saved in its Store; the queue
// may deliver a task again at any time, even a day later. The customer must
// receive one signing request per task, not two and not zero, and the
// Store must say truthfully what happened to every task.
package ambiguous

import (
	"context"
	"errors"

	"github.com/fourth-outcome/labkit/task"
)

// The types the worker shares with the queue, the store and the suite. They
// are defined in package task, which the suite uses too, and re-exported
// here so the worker can name them directly. Do not change them.

// Task is one unit of work from the queue: send Task.DocumentID to
// Task.Recipient for signature, on behalf of the provider account
// Task.Account. Task.ID is the same on every delivery of the task.
type Task = task.Task

// Delivery is one delivery of a task by the queue, which delivers at least
// once: until Delivery.Ack is called, the task comes back, possibly to a
// new worker process after a crash.
type Delivery = task.Delivery

// Record is what the worker keeps about one task in the durable Store: the
// operation id, the state, and the provider's request id or the error.
type Record = task.Record

// State is where a task's operation stands: Pending, Sent or Failed.
type State = task.State

// The states of a Record.
const (
	// Pending means an operation id is assigned and the outcome is not
	// known yet.
	Pending = task.Pending

	// Sent means the provider committed the signing request; the record's
	// RequestID says which one.
	Sent = task.Sent

	// Failed means the provider definitely refused the request; the
	// record's Error says why.
	Failed = task.Failed
)

// Store is the durable store: one Record per task id, surviving crashes and
// restarts. Nothing else the worker holds survives them.
type Store = task.Store

// Deps are what a worker process is built from: the provider, the Store,
// and NewID, which returns a new unique operation id on every call.
type Deps = task.Deps

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// Process works.
var ErrNotImplemented = errors.New("ambiguous: not implemented yet (TODO in labs/03-ambiguous/worker.go)")

// Worker processes signing tasks. A Worker is one worker process: after a
// crash the suite builds a new one with New, over the same Store and
// provider, and everything the old one held in memory is gone. Build it
// with New.
type Worker struct {
	// TODO: what one worker process needs from deps.
}

// New returns a worker process built on deps: deps.Provider is the signing
// provider, deps.Store the durable store, and deps.NewID returns a new,
// unique operation id on every call.
func New(deps Deps) *Worker {
	return &Worker{}
}

// Process handles one delivery of a task: it makes sure the task's signing
// request is sent exactly once, records the outcome in the Store, and
// acknowledges the delivery with d.Ack.
//
//   - Sent: the task's record says Sent with the provider's request id; the
//     delivery is acknowledged; Process returns nil.
//   - Refused by the provider (parameter mismatch, invalid request,
//     unauthorized): the record says Failed; the delivery is acknowledged;
//     Process returns an error wrapping the provider's.
//   - Not known yet (no answer, "in progress", the provider unavailable
//     until ctx ends): the record stays Pending and the delivery is not
//     acknowledged, so the queue delivers the task again later; Process
//     returns an error.
//
// A redelivery of a task whose outcome is recorded only acknowledges it.
// Process returns when ctx is done at the latest.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	// TODO: implement. Start with the README's "What to implement".
	return ErrNotImplemented
}
