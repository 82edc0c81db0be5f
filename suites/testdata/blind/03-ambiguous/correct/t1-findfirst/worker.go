// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request.
//
// Design: "find before you send". A task whose record is Pending may have
// been sent by an earlier attempt, so before every Send but the very first
// the worker asks Find (by reference, which never expires) whether the
// operation was committed. Status is never used: Find answers for ever.
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
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

const (
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 10 * time.Second
)

func refusal(err error) bool {
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, found, err := w.store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("ambiguous: load %s: %w", t.ID, err)
	}
	attempted := found
	if found {
		switch rec.State {
		case Sent:
			return w.ack(ctx, d, nil)
		case Failed:
			return w.ack(ctx, d, fmt.Errorf("ambiguous: task %s was refused earlier: %s", t.ID, rec.Error))
		}
	} else {
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("ambiguous: save operation id of %s: %w", t.ID, err)
		}
	}
	op := rec.OperationID
	req := provider.SendRequest{DocumentID: t.DocumentID, Recipient: t.Recipient, Subject: t.Subject, Reference: op}

	backoff := firstBackoff
	var last error
	for {
		var wait time.Duration
		if attempted {
			rs, err := w.api.Find(ctx, t.Account, op)
			if err == nil && len(rs) > 0 {
				return w.settle(ctx, d, Record{OperationID: op, State: Sent, RequestID: rs[0].RequestID}, nil)
			}
			if err != nil {
				last = fmt.Errorf("ambiguous: find %s: %w", op, err)
				wait = backoff
				if ra, ok := provider.RetryAfter(err); ok && ra > wait {
					wait = ra
				}
			}
		}
		if wait == 0 {
			attempted = true
			r, err := w.api.Send(ctx, t.Account, op, req)
			if err == nil {
				return w.settle(ctx, d, Record{OperationID: op, State: Sent, RequestID: r.RequestID}, nil)
			}
			if refusal(err) {
				return w.settle(ctx, d, Record{OperationID: op, State: Failed, Error: err.Error()},
					fmt.Errorf("ambiguous: provider refused task %s: %w", t.ID, err))
			}
			last = fmt.Errorf("ambiguous: send %s: %w", op, err)
			wait = backoff
			if ra, ok := provider.RetryAfter(err); ok && ra > wait {
				wait = ra
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (gave up: %w)", last, ctx.Err())
		}
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return fmt.Errorf("%w (gave up: %w)", last, ctx.Err())
		case <-tm.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// settle saves the outcome, then acknowledges; result is what Process
// returns when both succeed.
func (w *Worker) settle(ctx context.Context, d Delivery, rec Record, result error) error {
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		return errors.Join(fmt.Errorf("ambiguous: save outcome of %s: %w", d.Task.ID, err), result)
	}
	return w.ack(ctx, d, result)
}

func (w *Worker) ack(ctx context.Context, d Delivery, result error) error {
	if err := d.Ack(ctx); err != nil {
		return errors.Join(fmt.Errorf("ambiguous: ack %s: %w", d.Task.ID, err), result)
	}
	return result
}
