// Package task holds the types that a lab's worker shares with the rest of
// the system it runs in: the queue that delivers tasks, the durable store
// it writes to, and the suite that checks it. They are the course's
// vocabulary for a durable task engine, defined once so that a starter, its
// solution and its suite all speak of the same Task and Record; a lab's
// package re-exports the ones it uses as aliases, so student code names them
// without this package.
//
// Lab 03 (the signing provider and the crash boundary) brings the first
// ones: a Task and its at-least-once Delivery, the durable Record of the
// task's operation with its State, the Store that keeps it, and the Deps a
// worker process is built from. The labs still to come add theirs here:
// leases and their visibility timeouts, fencing tokens, delivery counts for
// dead-lettering, checkpoints and admission limits. Only types live here,
// with the methods that render them; no behaviour a lab asks students to
// write, and nothing a test needs.
package task

import (
	"context"
	"fmt"

	"github.com/fourth-outcome/labkit/provider"
)

// Task is one unit of work from the queue: send document DocumentID to
// Recipient for signature, on behalf of the provider account Account.
type Task struct {
	// ID is the queue's id for the task ("task-1"). It is the same on every
	// delivery of the task and different for every other task.
	ID string

	// Account is the provider account (the API token) the task runs under.
	Account string

	DocumentID string // the document to be signed, "contract-7"
	Recipient  string // who signs it, "ann@example.com"
	Subject    string // the subject line of the signing request
}

// Delivery is one delivery of a task by the queue. The queue delivers at
// least once: until a delivery is acknowledged, the task is delivered again
// after a while, to the same worker or, after a crash, to the worker that
// replaces it. It may also deliver a task again after it was acknowledged.
type Delivery struct {
	Task Task

	// Attempt counts the deliveries of this task: 1 for the first, 2 for
	// the second, and so on.
	Attempt int

	// Ack acknowledges the delivery: the queue removes the task and stops
	// delivering it. It is the last thing a worker does with a task.
	Ack func(ctx context.Context) error
}

// State is where a task's operation stands in the durable record.
type State string

// The states of a Record.
const (
	// Pending means an operation id has been assigned to the task, and the
	// outcome at the provider is not known yet.
	Pending State = "pending"

	// Sent means the provider committed the signing request; the record's
	// RequestID says which one.
	Sent State = "sent"

	// Failed means the provider definitely refused the request: it was not
	// sent and will not be sent. The record's Error says why.
	Failed State = "failed"
)

// Record is what a worker keeps about one task in the durable Store.
type Record struct {
	// OperationID identifies the one intended operation "send this task's
	// document": the idempotency key (and reference) the provider sees.
	OperationID string

	State     State
	RequestID string // the provider's id of the signing request, when Sent
	Error     string // why, when Failed
}

// String renders the record for timelines: "sent op-000001 sr_000001".
func (r Record) String() string {
	s := string(r.State)
	if s == "" {
		s = `state ""`
	}
	if r.OperationID != "" {
		s += " " + r.OperationID
	} else {
		s += " (no operation id)"
	}
	switch {
	case r.RequestID != "":
		s += " " + r.RequestID
	case r.State == Sent:
		s += " (no request id)"
	}
	if r.Error != "" {
		s += fmt.Sprintf(" (%s)", r.Error)
	}
	return s
}

// Store is the worker's durable storage, one Record per task id. What Save
// wrote survives a crash and a restart: the next worker process, built over
// the same Store, Loads it. Memory does not survive; neither does anything
// a worker keeps in its own fields.
type Store interface {
	// Load returns the record saved for taskID, and false when there is
	// none.
	Load(ctx context.Context, taskID string) (Record, bool, error)

	// Save stores r as taskID's record, replacing any earlier one. When it
	// returns nil, the record is durable.
	Save(ctx context.Context, taskID string, r Record) error
}

// Deps are what a worker process is built from. A restart builds a new
// worker from Deps holding the same provider, the same Store and the same
// id source.
type Deps struct {
	// Provider is the signing provider's API.
	Provider provider.API

	// Store is the durable store.
	Store Store

	// NewID returns a new operation id ("op-000001") each time it is
	// called: never one it returned before, in this process or any other.
	NewID func() string
}
