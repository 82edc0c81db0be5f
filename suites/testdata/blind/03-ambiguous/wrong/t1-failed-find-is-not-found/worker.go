// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request.
package ambiguous

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

type Task = task.Task
type Delivery = task.Delivery
type Record = task.Record
type State = task.State

const (
	Pending = task.Pending
	Sent    = task.Sent
	Failed  = task.Failed
)

type Store = task.Store
type Deps = task.Deps

// Worker processes signing tasks.
type Worker struct {
	deps Deps
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{deps: deps}
}

func isRefusal(err error) bool {
	//@REFUSAL
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	//@LOAD
	rec, found, err := w.deps.Store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("ambiguous: load %s: %w", t.ID, err)
	}
	if found && rec.State == Sent {
		return w.ack(ctx, d, nil)
	}
	if found && rec.State == Failed {
		return w.ack(ctx, d, fmt.Errorf("ambiguous: task %s was refused: %s", t.ID, rec.Error))
	}
	if !found {
		rec = Record{OperationID: w.newID(t), State: Pending}
		//@SAVEPENDING
		if err := w.deps.Store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("ambiguous: save %s: %w", t.ID, err)
		}
	} else {
		//@RECONCILE
		r, err := w.deps.Provider.Status(ctx, t.Account, rec.OperationID)
		switch {
		case err == nil:
			return w.record(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: r.RequestID}, nil)
		case errors.Is(err, provider.ErrNotFound):
			//@FIND
			rs, _ := w.deps.Provider.Find(ctx, t.Account, rec.OperationID)
			var ferr error
			if ferr != nil {
				return fmt.Errorf("ambiguous: find %s: %w", rec.OperationID, ferr)
			}
			if len(rs) > 0 {
				return w.record(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: rs[0].RequestID}, nil)
			}
		case errors.Is(err, provider.ErrInProgress):
			// fall through to a Send with the same key, which waits it out
		default:
			return fmt.Errorf("ambiguous: status %s: %w", rec.OperationID, err)
		}
	}
	op := rec.OperationID
	req := provider.SendRequest{DocumentID: t.DocumentID, Recipient: t.Recipient, Subject: t.Subject, Reference: op}
	backoff := 100 * time.Millisecond
	for {
		r, err := w.deps.Provider.Send(ctx, t.Account, op, req)
		if err == nil {
			return w.record(ctx, d, Record{OperationID: op, State: Sent, RequestID: r.RequestID}, nil)
		}
		if isRefusal(err) {
			return w.record(ctx, d, Record{OperationID: op, State: Failed, Error: err.Error()},
				fmt.Errorf("ambiguous: refused: %w", err))
		}
		//@UNKNOWN
		wait := backoff
		//@THROTTLE
		if ra, ok := provider.RetryAfter(err); ok && ra > wait {
			wait = ra
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ambiguous: send %s: %w (gave up: %w)", op, err, ctx.Err())
		case <-time.After(wait):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

func (w *Worker) newID(t Task) string {
	//@NEWID
	return w.deps.NewID()
}

func (w *Worker) record(ctx context.Context, d Delivery, rec Record, result error) error {
	//@RECORD
	if err := w.deps.Store.Save(ctx, d.Task.ID, rec); err != nil {
		return errors.Join(fmt.Errorf("ambiguous: save outcome: %w", err), result)
	}
	return w.ack(ctx, d, result)
}

func (w *Worker) ack(ctx context.Context, d Delivery, result error) error {
	if err := d.Ack(ctx); err != nil {
		//@ACKERR
		return errors.Join(fmt.Errorf("ambiguous: ack: %w", err), result)
	}
	return result
}
