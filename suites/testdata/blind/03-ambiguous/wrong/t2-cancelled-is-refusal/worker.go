// Package ambiguous: blind tester t2's correct alternative. Design: the
// provider's Find-by-reference (which never forgets) is the only lookup;
// every unknown outcome and every redelivery of a pending task is
// reconciled with Find before the same key is sent again.
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

// Worker is one worker process.
type Worker struct {
	api   provider.API
	store Store
	newID func() string
}

// New returns a worker process built on deps.
func New(deps Deps) *Worker {
	return &Worker{api: deps.Provider, store: deps.Store, newID: deps.NewID}
}

// errFailedTask is returned for a delivery of a task recorded Failed.
var errFailedTask = errors.New("ambiguous: task was refused by the provider")

// refusal: what the provider says is not worth retrying.
func refusal(err error) bool {
	return !provider.Retryable(err)
}

// Process handles one delivery of a task.
func (w *Worker) Process(ctx context.Context, d Delivery) error {
	t := d.Task
	rec, found, err := w.store.Load(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("task %s: load: %w", t.ID, err)
	}
	if found && rec.State != Pending {
		return w.ack(ctx, d, rec)
	}
	if !found || rec.OperationID == "" {
		rec = Record{OperationID: w.newID(), State: Pending}
		if err := w.store.Save(ctx, t.ID, rec); err != nil {
			return fmt.Errorf("task %s: save operation id: %w", t.ID, err)
		}
	} else {
		// an earlier delivery may have sent it: Find decides.
		if done, err := w.reconcile(ctx, d, rec); done || err != nil {
			return err
		}
	}
	req := provider.SendRequest{DocumentID: t.DocumentID, Recipient: t.Recipient, Subject: t.Subject, Reference: rec.OperationID}
	backoff := 100 * time.Millisecond
	for {
		r, err := w.api.Send(ctx, t.Account, rec.OperationID, req)
		if err == nil {
			return w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: r.RequestID})
		}
		if refusal(err) {
			serr := w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Failed, Error: err.Error()})
			if serr != nil && !errors.Is(serr, errFailedTask) {
				return fmt.Errorf("task %s: refused (%w), then: %w", t.ID, err, serr)
			}
			return fmt.Errorf("task %s: refused: %w", t.ID, err)
		}
		wait := backoff
		if ra, ok := provider.RetryAfter(err); ok && ra > wait {
			wait = ra
		}
		backoff = min(backoff*2, 10*time.Second)
		if werr := sleep(ctx, wait); werr != nil {
			return fmt.Errorf("task %s: outcome unknown (%v): %w", t.ID, err, werr)
		}
		if errors.Is(err, provider.ErrThrottled) || errors.Is(err, provider.ErrUnavailable) {
			continue // nothing was committed
		}
		if done, rerr := w.reconcile(ctx, d, rec); done || rerr != nil {
			return rerr
		}
	}
}

// reconcile looks the operation up by reference. done reports that the task
// was found sent (and settled, with the error of settling).
func (w *Worker) reconcile(ctx context.Context, d Delivery, rec Record) (done bool, err error) {
	rs, err := w.api.Find(ctx, d.Task.Account, rec.OperationID)
	if err != nil {
		return false, fmt.Errorf("task %s: find %s: %w", d.Task.ID, rec.OperationID, err)
	}
	if len(rs) == 0 {
		return false, nil
	}
	return true, w.settle(ctx, d, Record{OperationID: rec.OperationID, State: Sent, RequestID: rs[0].RequestID})
}

func (w *Worker) settle(ctx context.Context, d Delivery, rec Record) error {
	if err := w.store.Save(ctx, d.Task.ID, rec); err != nil {
		return fmt.Errorf("task %s: save outcome: %w", d.Task.ID, err)
	}
	return w.ack(ctx, d, rec)
}

func (w *Worker) ack(ctx context.Context, d Delivery, rec Record) error {
	if err := d.Ack(ctx); err != nil {
		return fmt.Errorf("task %s: ack: %w", d.Task.ID, err)
	}
	if rec.State == Failed {
		return fmt.Errorf("task %s: %w: %s", d.Task.ID, errFailedTask, rec.Error)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
