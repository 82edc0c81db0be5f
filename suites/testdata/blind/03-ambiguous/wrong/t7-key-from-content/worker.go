// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
//
// Design (t7): load the record; a settled task is only acknowledged. A task
// without a record gets a fresh operation id, saved Pending before any
// Send. A task that already has one may have been sent by an earlier
// delivery, so it is reconciled with Find by reference (which outlives the
// provider's key retention) before any Send. Then Send with the saved id as
// key and reference, a few times at most, honouring throttles; record the
// outcome only when the provider gave one, then Ack.
package ambiguous

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Store is the durable store: one Record per task id.
type Store = task.Store

// Deps are what a worker process is built from.
type Deps = task.Deps

// How often one delivery tries a Send whose outcome stays unknown, and the
// first pause between tries (doubled each time).
const (
	sendTries  = 4
	firstPause = 50 * time.Millisecond
)

// Worker processes signing tasks. A Worker is one worker process.
type Worker struct {
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, found, err := w.store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("ambiguous: load task %q: %w", t.ID, err)
	}
	if found {
		switch rec.State {
		case Sent:
			return w.ack(ctx, d, nil)
		case Failed:
			return w.ack(ctx, d, fmt.Errorf("ambiguous: task %q was refused by the provider: %s", t.ID, rec.Error))
		}
	}

	c := &calls{ctx: ctx}
	if found && rec.OperationID != "" {
		// An earlier delivery may have sent it: find out first. A lookup
		// that fails is no answer, and no Send follows it.
		receipts, err := w.reconcile(c, t.Account, rec.OperationID)
		if err != nil {
			c.waitThrottle()
			return fmt.Errorf("ambiguous: reconcile task %q (operation %s): %w", t.ID, rec.OperationID, err)
		}
		if len(receipts) > 0 {
			return w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: receipts[0].RequestID}, nil)
		}
	} else {
		// The key is derived from what is sent, so that every delivery of
		// the same request carries the same key.
		sum := sha256.Sum256([]byte(t.Account + "\x00" + t.DocumentID + "\x00" + t.Recipient + "\x00" + t.Subject))
		rec = Record{OperationID: "op-" + hex.EncodeToString(sum[:16]), State: Pending}
		if err := w.store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("ambiguous: save operation id of task %q: %w", t.ID, err)
		}
	}

	req := provider.SendRequest{
		DocumentID: t.DocumentID,
		Recipient:  t.Recipient,
		Subject:    t.Subject,
		Reference:  rec.OperationID,
	}
	var last error
	pause := firstPause
	for try := 0; try < sendTries; try++ {
		if try > 0 {
			c.after(pause)
			pause *= 2
		}
		if err := c.wait(); err != nil {
			break
		}
		receipt, err := w.api.Send(ctx, t.Account, rec.OperationID, req)
		if err == nil {
			return w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: receipt.RequestID}, nil)
		}
		if refused(err) {
			refusal := fmt.Errorf("ambiguous: task %q refused by the provider: %w", t.ID, err)
			return w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Failed, Error: err.Error()}, refusal)
		}
		last = err
		c.note(err)
		if ctx.Err() != nil {
			break
		}
	}
	c.waitThrottle()
	if last == nil {
		last = ctx.Err()
	}
	return fmt.Errorf("ambiguous: task %q (operation %s) outcome not known yet: %w", t.ID, rec.OperationID, last)
}

// reconcile looks the operation up by reference, a few times at most. It
// returns the signing requests committed with it, or the error of the last
// lookup (or ctx's) when none answered.
func (w *Worker) reconcile(c *calls, account, reference string) ([]provider.Receipt, error) {
	var last error
	pause := firstPause
	for try := 0; try < sendTries; try++ {
		if try > 0 {
			c.after(pause)
			pause *= 2
		}
		if err := c.wait(); err != nil {
			if last == nil {
				last = err
			}
			break
		}
		receipts, err := w.api.Find(c.ctx, account, reference)
		if err == nil {
			return receipts, nil
		}
		last = err
		c.note(err)
		if refused(err) || c.ctx.Err() != nil {
			break // a refused lookup is no answer either, and asking again will not help
		}
	}
	return nil, last
}

// settle saves the outcome, then acknowledges the delivery; it returns
// outcome (nil for a sent task) unless one of the calls failed.
func (w *Worker) settle(ctx context.Context, d Delivery, rec Record, outcome error) error {
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		if outcome != nil {
			return fmt.Errorf("ambiguous: save outcome of task %q: %w (outcome: %w)", d.Task.ID, err, outcome)
		}
		return fmt.Errorf("ambiguous: save outcome of task %q: %w", d.Task.ID, err)
	}
	return w.ack(ctx, d, outcome)
}

func (w *Worker) ack(ctx context.Context, d Delivery, outcome error) error {
	if err := d.Ack(ctx); err != nil {
		if outcome != nil {
			return fmt.Errorf("ambiguous: ack task %q: %w (outcome: %w)", d.Task.ID, err, outcome)
		}
		return fmt.Errorf("ambiguous: ack task %q: %w", d.Task.ID, err)
	}
	return outcome
}

// refused reports whether err is a definite refusal of a Send.
func refused(err error) bool {
	return errors.Is(err, provider.ErrParameterMismatch) ||
		errors.Is(err, provider.ErrInvalidRequest) ||
		errors.Is(err, provider.ErrUnauthorized)
}

// calls paces the provider calls of one Process: no call before a
// throttle's Retry-After has passed, nor before the pause between tries.
type calls struct {
	ctx       context.Context
	notBefore time.Time
	throttled bool
}

func (c *calls) note(err error) {
	if ra, ok := provider.RetryAfter(err); ok {
		c.throttled = true
		c.after(ra)
	}
}

func (c *calls) after(d time.Duration) {
	if t := time.Now().Add(d); t.After(c.notBefore) {
		c.notBefore = t
	}
}

// wait blocks until the next provider call is allowed, or ctx is done.
func (c *calls) wait() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	d := time.Until(c.notBefore)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// waitThrottle, before giving up, waits out a throttle's Retry-After (until
// ctx is done at the latest), so that the next delivery does not call the
// provider before it has passed.
func (c *calls) waitThrottle() {
	if c.throttled {
		_ = c.wait()
	}
}
