// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
package ambiguous

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

// Task is one unit of work from the queue.
type Task = task.Task

// Delivery is one delivery of a task by the queue.
type Delivery = task.Delivery

// Record is what the worker keeps about one task in the durable Store.
type Record = task.Record

// State is where a task's operation stands: Pending, Sent or Failed.
type State = task.State

// The states of a Record.
const (
	Pending = task.Pending
	Sent    = task.Sent
	Failed  = task.Failed
)

// Store is the durable store.
type Store = task.Store

// Deps are what a worker process is built from.
type Deps = task.Deps

// Worker processes signing tasks.
type Worker struct {
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

const maxAttempts = 8

func isRefusal(err error) bool {
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, ok, err := w.store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("load %s: %w", t.ID, err)
	}
	if ok {
		switch rec.State {
		case Sent:
			return d.Ack(ctx)
		case Failed:
			if err := d.Ack(ctx); err != nil {
				return err
			}
			return fmt.Errorf("task %s was refused earlier: %s", t.ID, rec.Error)
		}
	}
	reconcile := ok
	if !ok {
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("save pending %s: %w", t.ID, err)
		}
	}
	req := provider.SendRequest{
		DocumentID: t.DocumentID,
		Recipient:  t.Recipient,
		Subject:    t.Subject,
		Reference:  rec.OperationID,
	}

	backoff := 100 * time.Millisecond
	var lastErr error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			wait := backoff
			if ra, ok := provider.RetryAfter(lastErr); ok && ra > wait {
				wait = ra
			}
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return fmt.Errorf("task %s outcome unknown: %w (last: %v)", t.ID, ctx.Err(), lastErr)
			case <-timer.C:
			}
			if backoff < 5*time.Second {
				backoff *= 2
			}
		}
		if reconcile {
			got, err := w.api.Status(ctx, t.Account, rec.OperationID)
			if err == nil {
				return w.finishSent(ctx, d, rec, got.RequestID)
			}
			if !errors.Is(err, provider.ErrNotFound) {
				lastErr = err
				if ctx.Err() != nil {
					break
				}
				continue
			}
			// Not found: the earlier attempt never reached the provider.
			reconcile = false
		}
		r, err := w.api.Send(ctx, t.Account, rec.OperationID, req)
		if err == nil {
			return w.finishSent(ctx, d, rec, r.RequestID)
		}
		if isRefusal(err) {
			rec.State = Failed
			rec.Error = err.Error()
			if serr := w.store.Save(ctx, t.ID, rec); serr != nil {
				return fmt.Errorf("save failed %s: %w (refused: %w)", t.ID, serr, err)
			}
			if aerr := d.Ack(ctx); aerr != nil {
				return fmt.Errorf("ack %s: %w (refused: %w)", t.ID, aerr, err)
			}
			return fmt.Errorf("task %s refused: %w", t.ID, err)
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("task %s outcome unknown, will retry on redelivery: %w", t.ID, lastErr)
}

func (w *Worker) finishSent(ctx context.Context, d Delivery, rec Record, requestID string) error {
	rec.State = Sent
	rec.RequestID = requestID
	rec.Error = ""
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		return fmt.Errorf("save sent %s: %w", d.Task.ID, err)
	}
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("ack %s: %w", d.Task.ID, err)
	}
	return nil
}
