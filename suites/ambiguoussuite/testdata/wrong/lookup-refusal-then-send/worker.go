// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
//
// This is the reference solution of lab 03. Three decisions carry it:
//
//   - Each task gets one operation id, created and saved in the durable
//     Store before the first Send. Every attempt, in this process or in the
//     process that replaces it after a crash, sends that id as the
//     provider's idempotency key and as the request's Reference.
//   - An answer that is not an answer (a timeout, "in progress", a crash
//     around the call) leaves the task pending. The worker finds out what
//     happened instead of guessing: it repeats the Send with the same key,
//     and on a redelivery it first asks the provider, with Find, whether the
//     operation was already sent. Find searches by reference, which the
//     provider never forgets, so the question still has an answer after
//     the key's retention window.
//   - The outcome is saved before the delivery is acknowledged. Once the
//     queue has the acknowledgement, nobody looks at the task again.
package ambiguous

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/provider"
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

// The retry policy for calls to the provider within one delivery. Lab 04 is
// about choosing these well; here they only need to be bounded and to
// leave the delivery's deadline some room.
const (
	attemptTimeout = 30 * time.Second // how long one call may wait for an answer
	maxAttempts    = 8                // calls per operation per delivery
	firstBackoff   = time.Second      // the wait after the first failed call
	maxBackoff     = 30 * time.Second // the longest wait between calls
)

// Worker processes signing tasks. A Worker is one worker process: it keeps
// nothing in memory that a restart would lose. Build it with New.
type Worker struct {
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

// Process handles one delivery of a task: it makes sure the task's signing
// request is sent exactly once, records the outcome in the Store, and
// acknowledges the delivery.
//
//   - Sent: the task's record says Sent with the provider's request id; the
//     delivery is acknowledged; Process returns nil.
//   - Refused by the provider (parameter mismatch, invalid request,
//     unauthorized): the record says Failed; the delivery is acknowledged;
//     Process returns an error wrapping the provider's.
//   - Not known yet (no answer, "in progress", the provider unavailable
//     until the deadline): the record stays Pending and the delivery is not
//     acknowledged, so the queue delivers the task again later; Process
//     returns an error.
//
// A redelivery of a task whose outcome is recorded only acknowledges it.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	task := d.Task
	rec, found, err := w.store.Load(ctx, task.ID)
	if err != nil {
		return fmt.Errorf("process %s: load: %w", task.ID, err)
	}
	if !found {
		// The first delivery. Name the operation and write the name down
		// before anything leaves the process: if we die after the provider
		// commits, the next process must send under the same name.
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, task.ID, rec); err != nil {
			return fmt.Errorf("process %s: save: %w", task.ID, err)
		}
	}

	var sendErr error
	if rec.State == Pending {
		rec, sendErr = w.resolve(ctx, task, rec, found)
		if rec.State == Pending {
			// Undecided. Leave the delivery unacknowledged: the queue
			// brings the task back, and the next attempt resolves it.
			return fmt.Errorf("process %s: outcome of %s not known yet: %w", task.ID, rec.OperationID, sendErr)
		}
		if err := w.store.Save(ctx, task.ID, rec); err != nil {
			return fmt.Errorf("process %s: save: %w", task.ID, err)
		}
	}

	// The outcome is durable; only now may the queue forget the task.
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("process %s: ack: %w", task.ID, err)
	}
	switch {
	case rec.State != Failed:
		return nil
	case sendErr != nil:
		return fmt.Errorf("process %s: %w", task.ID, sendErr)
	default:
		return fmt.Errorf("process %s: refused by the provider earlier: %s", task.ID, rec.Error)
	}
}

// resolve drives a pending operation to an outcome: Sent, Failed, or still
// Pending (with the error that left it undecided). redelivered says that an
// earlier delivery saved the operation id, and so may have sent it.
func (w *Worker) resolve(ctx context.Context, task Task, rec Record, redelivered bool) (Record, error) {
	if redelivered {
		// An earlier attempt may have reached the provider: ask before
		// sending. Find searches by the reference, which outlives the key,
		// so this works however late the redelivery comes; a Send with the
		// old key after the retention window would be a new request.
		found, err := retry(ctx, func(ctx context.Context) ([]provider.Receipt, error) {
			return w.api.Find(ctx, task.Account, rec.OperationID)
		})
		if err != nil && !refused(err) {
			return rec, err // still unknown: do not send blindly
		}
		// A refusal is definite: nothing was committed, so send.
		if len(found) > 0 {
			// More than one would mean it was sent twice already; the
			// first is the one this operation stands for.
			return sent(rec, found[0]), nil
		}
		// Not committed (yet). If an earlier Send is still in flight, the
		// provider answers ours with ErrInProgress and retry waits; if it
		// commits meanwhile, ours is answered with its receipt.
	}

	req := provider.SendRequest{
		DocumentID: task.DocumentID,
		Recipient:  task.Recipient,
		Subject:    task.Subject,
		Reference:  rec.OperationID,
	}
	receipt, err := retry(ctx, func(ctx context.Context) (provider.Receipt, error) {
		return w.api.Send(ctx, task.Account, rec.OperationID, req)
	})
	switch {
	case err == nil:
		return sent(rec, receipt), nil
	case refused(err):
		rec.State, rec.Error = Failed, err.Error()
		return rec, err
	}
	// No answer, in progress, unavailable until we ran out of attempts, or
	// an error we cannot classify: any of them may hide a committed request.
	return rec, err
}

// sent returns rec completed with the provider's receipt.
func sent(rec Record, r provider.Receipt) Record {
	rec.State, rec.RequestID, rec.Error = Sent, r.RequestID, ""
	return rec
}

// refused reports whether err is a definite refusal: the provider answered,
// committed nothing, and will answer the same way every time.
func refused(err error) bool {
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// retry calls op until it succeeds, fails with an error that repeating
// cannot help (provider.Retryable), has been tried maxAttempts times, or ctx
// ends. Every call gets its own attemptTimeout, so that a lost response
// costs one attempt and not the whole delivery. Between calls it waits with
// exponential backoff, and at least as long as a throttle's hint.
func retry[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	var zero T
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		v, err := op(actx)
		cancel()
		if err == nil {
			return v, nil
		}
		if !provider.Retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return zero, err
		}
		delay := backoff
		if hint, ok := provider.RetryAfter(err); ok && hint > delay {
			delay = hint
		}
		backoff = min(2*backoff, maxBackoff)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, err
		case <-t.C:
		}
	}
}
