package ambiguous

import "github.com/fourth-outcome/labkit/suites/ambiguoussuite"

// The types the worker shares with the queue, the store and the suite. They
// are defined in package ambiguoussuite, which also checks the worker, and
// re-exported here so the worker can name them directly.

// Task is one unit of work from the queue: send Task.DocumentID to
// Task.Recipient for signature, on behalf of the provider account
// Task.Account. Task.ID is the same on every delivery of the task.
type Task = ambiguoussuite.Task

// Delivery is one delivery of a task by the queue, which delivers at least
// once: until Delivery.Ack is called, the task comes back, possibly to a
// new worker process after a crash.
type Delivery = ambiguoussuite.Delivery

// Record is what the worker keeps about one task in the durable Store: the
// operation id, the state, and the provider's request id or the error.
type Record = ambiguoussuite.Record

// State is where a task's operation stands: Pending, Sent or Failed.
type State = ambiguoussuite.State

// The states of a Record.
const (
	// Pending: an operation id is assigned; the outcome is not known yet.
	Pending = ambiguoussuite.Pending
	// Sent: the provider committed the signing request (Record.RequestID).
	Sent = ambiguoussuite.Sent
	// Failed: the provider definitely refused it (Record.Error).
	Failed = ambiguoussuite.Failed
)

// Store is the durable store: one Record per task id, surviving crashes and
// restarts. Nothing else the worker holds survives them.
type Store = ambiguoussuite.Store

// Deps are what a worker process is built from: the provider, the Store,
// and NewID, which returns a new unique operation id on every call.
type Deps = ambiguoussuite.Deps
