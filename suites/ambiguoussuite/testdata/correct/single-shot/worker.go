// Package ambiguous processes "send this document for signature" tasks so
// that each task leads to exactly one signing request, whatever crashes,
// lost responses and redeliveries happen on the way.
//
// Style: one provider interaction per delivery, no retry loop. Anything
// that does not settle the outcome returns an error without acknowledging,
// and the queue's redelivery is the retry. A pending record is always
// reconciled with Find before it is sent again.
package ambiguous

import (
	"context"
	"errors"
	"fmt"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

type (
	Task     = task.Task
	Delivery = task.Delivery
	Record   = task.Record
	State    = task.State
	Store    = task.Store
	Deps     = task.Deps
)

const (
	Pending = task.Pending
	Sent    = task.Sent
	Failed  = task.Failed
)

// Worker is one worker process; it holds only its dependencies.
type Worker struct{ deps Deps }

// New returns a worker process built on deps.
func New(deps Deps) *Worker { return &Worker{deps: deps} }

var errUnknown = errors.New("outcome not known yet; leaving the task for redelivery")

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, found, err := w.deps.Store.Load(ctx, t.ID)
	if err != nil {
		return err
	}
	switch {
	case found && rec.State == Sent:
		return d.Ack(ctx)
	case found && rec.State == Failed:
		if err := d.Ack(ctx); err != nil {
			return err
		}
		return fmt.Errorf("%s: already refused: %s", t.ID, rec.Error)
	case found:
		// Pending: an earlier attempt may have reached the provider.
		receipts, err := w.deps.Provider.Find(ctx, t.Account, rec.OperationID)
		if err != nil {
			return fmt.Errorf("%s: reconcile: %w: %w", t.ID, errUnknown, err)
		}
		if len(receipts) > 0 {
			return w.settle(ctx, d, rec, receipts[0].RequestID, nil)
		}
	default:
		rec = Record{OperationID: w.deps.NewID(), State: Pending}
		if err := w.deps.Store.Save(ctx, t.ID, rec); err != nil {
			return err
		}
	}
	receipt, err := w.deps.Provider.Send(ctx, t.Account, rec.OperationID, provider.SendRequest{
		DocumentID: t.DocumentID,
		Recipient:  t.Recipient,
		Subject:    t.Subject,
		Reference:  rec.OperationID,
	})
	switch {
	case err == nil:
		return w.settle(ctx, d, rec, receipt.RequestID, nil)
	case errors.Is(err, provider.ErrParameterMismatch),
		errors.Is(err, provider.ErrInvalidRequest),
		errors.Is(err, provider.ErrUnauthorized):
		return w.settle(ctx, d, rec, "", err)
	default:
		return fmt.Errorf("%s: %w: %w", t.ID, errUnknown, err)
	}
}

// settle saves the outcome and then acknowledges the delivery.
func (w *Worker) settle(ctx context.Context, d Delivery, rec Record, requestID string, refusal error) error {
	if refusal != nil {
		rec.State, rec.Error = Failed, refusal.Error()
	} else {
		rec.State, rec.RequestID = Sent, requestID
	}
	if err := w.deps.Store.Save(ctx, d.Task.ID, rec); err != nil {
		return errors.Join(err, refusal)
	}
	if err := d.Ack(ctx); err != nil {
		return errors.Join(err, refusal)
	}
	if refusal != nil {
		return fmt.Errorf("%s: refused: %w", d.Task.ID, refusal)
	}
	return nil
}
