// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request (t6's implementation:
// save the operation id first, reconcile a task already attempted with Find
// by reference, then Send with the saved id until an answer or ctx's end).
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

// Worker processes signing tasks. It holds only its dependencies.
type Worker struct {
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// refused reports whether err is a definite refusal of a Send.
func refused(err error) bool {
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// wait waits d, or until ctx is done (then it returns an error wrapping
// cause and ctx's error).
func wait(ctx context.Context, d time.Duration, cause error) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (gave up: %w)", cause, ctx.Err())
	}
}

// pause waits before the next provider call after err: at least a
// throttle's RetryAfter, or the backoff.
func pause(ctx context.Context, err error, backoff *time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (gave up: %w)", err, ctx.Err())
	}
	d := *backoff
	if ra, ok := provider.RetryAfter(err); ok && ra > d {
		d = ra
	}
	*backoff = min(2**backoff, maxBackoff)
	return wait(ctx, d, err)
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, ok, err := w.store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("ambiguous: load task %q: %w", t.ID, err)
	}
	if ok {
		switch rec.State {
		case Sent:
			return w.ack(ctx, d)
		case Failed:
			if err := w.ack(ctx, d); err != nil {
				return err
			}
			return fmt.Errorf("ambiguous: task %q was refused by the provider: %s", t.ID, rec.Error)
		}
	}
	attempted := ok
	if !ok {
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("ambiguous: save operation id of task %q: %w", t.ID, err)
		}
	}

	backoff := firstBackoff
	if attempted {
		// An earlier delivery may have sent it: ask by reference, which
		// outlives the key's retention.
		for {
			r, err := w.api.Status(ctx, t.Account, rec.OperationID)
			if err == nil {
				return w.settleSent(ctx, d, rec, r.RequestID)
			}
			if errors.Is(err, provider.ErrNotFound) {
				break
			}
			if !errors.Is(err, provider.ErrThrottled) {
				return fmt.Errorf("ambiguous: look up task %q (operation %s): %w", t.ID, rec.OperationID, err)
			}
			if err := pause(ctx, err, &backoff); err != nil {
				return fmt.Errorf("ambiguous: look up task %q: %w", t.ID, err)
			}
		}
	}

	req := provider.SendRequest{
		DocumentID: t.DocumentID,
		Recipient:  t.Recipient,
		Subject:    t.Subject,
		Reference:  rec.OperationID,
	}
	for {
		r, err := w.api.Send(ctx, t.Account, rec.OperationID, req)
		if err == nil {
			return w.settleSent(ctx, d, rec, r.RequestID)
		}
		if refused(err) {
			return w.settleFailed(ctx, d, rec, err)
		}
		if err := pause(ctx, err, &backoff); err != nil {
			return fmt.Errorf("ambiguous: send task %q (operation %s), outcome unknown: %w", t.ID, rec.OperationID, err)
		}
	}
}

func (w *Worker) settleSent(ctx context.Context, d Delivery, rec Record, requestID string) error {
	rec.State, rec.RequestID, rec.Error = Sent, requestID, ""
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		return fmt.Errorf("ambiguous: record task %q sent: %w", d.Task.ID, err)
	}
	return w.ack(ctx, d)
}

func (w *Worker) settleFailed(ctx context.Context, d Delivery, rec Record, perr error) error {
	rec.State, rec.Error = Failed, perr.Error()
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		return fmt.Errorf("ambiguous: record task %q failed: %w (provider: %w)", d.Task.ID, err, perr)
	}
	if err := w.ack(ctx, d); err != nil {
		return fmt.Errorf("%w (provider: %w)", err, perr)
	}
	return fmt.Errorf("ambiguous: task %q refused: %w", d.Task.ID, perr)
}

func (w *Worker) ack(ctx context.Context, d Delivery) error {
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("ambiguous: acknowledge task %q: %w", d.Task.ID, err)
	}
	return nil
}
