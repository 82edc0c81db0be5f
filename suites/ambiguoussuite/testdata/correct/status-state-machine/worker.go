// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
//
// Style: an explicit state machine. Every step returns the next step; an
// unknown outcome goes to "lookup", which asks Status about the key first
// and falls back to Find by reference when the key is not known (expired,
// or never committed), and only then to "send" again with the same key.
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
type Store = task.Store
type Deps = task.Deps

const (
	Pending = task.Pending
	Sent    = task.Sent
	Failed  = task.Failed
)

// Worker is one worker process.
type Worker struct {
	p     provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{p: deps.Provider, store: deps.Store, newID: deps.NewID}
}

type step int

const (
	stepLookup step = iota
	stepSend
)

const (
	maxSteps    = 12
	callTimeout = 20 * time.Second
)

// run is one task's operation inside one Process call.
type run struct {
	w   *Worker
	d   Delivery
	rec Record
	req provider.SendRequest
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	rec, ok, err := w.store.Load(ctx, d.Task.ID)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	next := stepLookup
	if ok && rec.State != Pending {
		if err := d.Ack(ctx); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		if rec.State == Failed {
			return fmt.Errorf("task %s refused earlier: %s", d.Task.ID, rec.Error)
		}
		return nil
	}
	if !ok {
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
			return fmt.Errorf("save operation id: %w", err)
		}
		next = stepSend // nothing can have been sent under a brand-new id
	}
	r := &run{w: w, d: d, rec: rec, req: provider.SendRequest{
		DocumentID: d.Task.DocumentID, Recipient: d.Task.Recipient,
		Subject: d.Task.Subject, Reference: rec.OperationID,
	}}

	var last error
	for i := 0; i < maxSteps; i++ {
		if i > 0 {
			if err := pause(ctx, i, last); err != nil {
				return fmt.Errorf("task %s still unknown: %w (last: %w)", d.Task.ID, err, last)
			}
		}
		var done bool
		var result error
		switch next {
		case stepLookup:
			next, done, result, last = r.lookup(ctx)
		case stepSend:
			next, done, result, last = r.send(ctx)
		}
		if done {
			return result
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("task %s: outcome unknown for now: %w", d.Task.ID, last)
}

func pause(ctx context.Context, i int, last error) error {
	d := time.Duration(1<<min(i, 6)) * 50 * time.Millisecond
	if ra, ok := provider.RetryAfter(last); ok && ra > d {
		d = ra
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lookup finds out whether the operation was committed.
func (r *run) lookup(ctx context.Context) (next step, done bool, result, last error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	acct, op := r.d.Task.Account, r.rec.OperationID
	receipt, err := r.w.p.Status(cctx, acct, op)
	switch {
	case err == nil:
		return 0, true, r.sent(ctx, receipt.RequestID), nil
	case errors.Is(err, provider.ErrInProgress):
		return stepLookup, false, nil, err
	case !errors.Is(err, provider.ErrNotFound):
		return stepLookup, false, nil, err
	}
	// The key is unknown: never committed, or forgotten after retention.
	found, err := r.w.p.Find(cctx, acct, op)
	if err != nil {
		return stepLookup, false, nil, err
	}
	if len(found) > 0 {
		return 0, true, r.sent(ctx, found[0].RequestID), nil
	}
	return stepSend, false, nil, nil
}

// send sends under the task's one operation id.
func (r *run) send(ctx context.Context) (next step, done bool, result, last error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	receipt, err := r.w.p.Send(cctx, r.d.Task.Account, r.rec.OperationID, r.req)
	switch {
	case err == nil:
		return 0, true, r.sent(ctx, receipt.RequestID), nil
	case errors.Is(err, provider.ErrParameterMismatch),
		errors.Is(err, provider.ErrInvalidRequest),
		errors.Is(err, provider.ErrUnauthorized):
		return 0, true, r.refused(ctx, err), nil
	case errors.Is(err, provider.ErrUnavailable), errors.Is(err, provider.ErrThrottled):
		return stepSend, false, nil, err // nothing committed: send again
	default:
		return stepLookup, false, nil, err // timeout, in progress: find out
	}
}

func (r *run) sent(ctx context.Context, requestID string) error {
	r.rec.State, r.rec.RequestID = Sent, requestID
	if err := r.w.store.Save(ctx, r.d.Task.ID, r.rec); err != nil {
		return fmt.Errorf("save sent: %w", err)
	}
	if err := r.d.Ack(ctx); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	return nil
}

func (r *run) refused(ctx context.Context, cause error) error {
	r.rec.State, r.rec.Error = Failed, cause.Error()
	if err := r.w.store.Save(ctx, r.d.Task.ID, r.rec); err != nil {
		return fmt.Errorf("save failed: %w (refusal: %w)", err, cause)
	}
	if err := r.d.Ack(ctx); err != nil {
		return fmt.Errorf("ack: %w (refusal: %w)", err, cause)
	}
	return fmt.Errorf("task %s refused by the provider: %w", r.d.Task.ID, cause)
}
