// Package deadletter is a task queue that counts deliveries and parks a
// task in a dead-letter queue when it keeps failing, so that one poison
// message cannot crash its consumers forever.
//
// Lab 07: dead-lettering by delivery count. Read README.md in this
// directory first, then make `go run ./cmd/labctl check 7` pass.
//
// The scenario: a task whose document a consumer cannot parse crashes the
// consumer process, every time. A crashed consumer never reports anything,
// so the queue only learns of it when the delivery's visibility timeout
// passes, and delivers the task again, to the next consumer, which crashes
// too. Counting failures never stops this: nobody reports one. Counting
// deliveries does: the queue delivers a task at most MaxDeliveries times,
// then parks it where an operator can read it, fix the cause and redrive
// it. A task the validator rejects is parked before it reaches anyone.
package deadletter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// The types the queue shares with the suite and the later labs. They are
// defined in package task and re-exported here. Do not change them.

// Task is one unit of work in the queue; Task.ID names it.
type Task = task.Task

// Receipt is the opaque receipt of one delivery of a task.
type Receipt = task.Receipt

// Message is one delivery of a task to one consumer.
type Message = task.Message

// DeadLetter is a task parked in the dead-letter queue.
type DeadLetter = task.DeadLetter

// DeadLetterReason says why a task was dead-lettered.
type DeadLetterReason = task.DeadLetterReason

// Options configure a Queue.
type Options = task.DeadLetterOptions

// The limits of a Queue.
const (
	DefaultMaxDeliveries   = task.DefaultMaxDeliveries
	DefaultDeliveryTimeout = task.DefaultDeliveryTimeout
	MaxDeliveryTimeout     = task.MaxDeliveryTimeout
)

// The reasons for a dead letter.
const (
	ReasonMaxDeliveries = task.ReasonMaxDeliveries
	ReasonMalformed     = task.ReasonMalformed
)

// The errors of a Queue, matched with errors.Is.
var (
	ErrNoMessage        = task.ErrNoMessage
	ErrDeliveryLost     = task.ErrDeliveryLost
	ErrInvalidOptions   = task.ErrInvalidOptions
	ErrNoTaskID         = task.ErrNoTaskID
	ErrDuplicateMessage = task.ErrDuplicateMessage
	ErrNoCause          = task.ErrNoCause
	ErrNotDeadLettered  = task.ErrNotDeadLettered
)

// ErrClosed is what a method of a closed Queue returns.
var ErrClosed = errors.New("deadletter: queue closed")

// This design is an actor: one goroutine owns both queues and runs every
// operation to completion, one at a time, so each move between the queue and
// the DLQ is one step by construction. Two things never run in the actor:
// the validator and a cause's Error method, which may be slow. Receive
// reserves its candidate in the actor (still in the main queue, marked as
// being validated), validates it in the caller's goroutine, and comes back
// to the actor to deliver it or dead-letter it.

// entry is a task in the main queue.
type entry struct {
	task       Task
	seq        uint64 // its place: when it was enqueued or redriven
	deliveries int
	lastErr    string
	validating bool

	// the delivery in progress, while delivered
	delivered bool
	receipt   Receipt
	consumer  string
	expires   time.Time
}

// state is what the actor owns.
type state struct {
	max      int
	vis      time.Duration
	tasks    map[string]*entry
	receipts map[Receipt]*entry
	dlq      []DeadLetter
	seq      uint64
	nReceipt uint64
}

// Queue is an in-memory task queue with a dead-letter queue beside it. It
// must be safe for concurrent use. Build it with New; Close stops it.
type Queue struct {
	validate func(Task) error
	ops      chan func(*state)
	quit     chan struct{}
	closed   chan struct{}
}

// New returns an empty queue.
func New(opts Options) (*Queue, error) {
	if opts.MaxDeliveries < 0 {
		return nil, fmt.Errorf("deadletter: MaxDeliveries %d: %w", opts.MaxDeliveries, ErrInvalidOptions)
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxDeliveryTimeout {
		return nil, fmt.Errorf("deadletter: visibility timeout %v: %w", opts.VisibilityTimeout, ErrInvalidOptions)
	}
	st := &state{max: opts.MaxDeliveries, vis: opts.VisibilityTimeout, tasks: map[string]*entry{}, receipts: map[Receipt]*entry{}}
	if st.max == 0 {
		st.max = DefaultMaxDeliveries
	}
	if st.vis == 0 {
		st.vis = DefaultDeliveryTimeout
	}
	q := &Queue{validate: opts.Validate, ops: make(chan func(*state)), quit: make(chan struct{}), closed: make(chan struct{})}
	go q.loop(st)
	return q, nil
}

func (q *Queue) loop(st *state) {
	defer close(q.closed)
	for {
		select {
		case op := <-q.ops:
			op(st)
		case <-q.quit:
			return
		}
	}
}

// Close stops the queue's goroutine. The queue is unusable afterwards.
func (q *Queue) Close() error {
	select {
	case <-q.quit:
	default:
		close(q.quit)
	}
	<-q.closed
	return nil
}

// exec runs op in the actor, unless ctx is done before the actor takes it.
func (q *Queue) exec(ctx context.Context, what string, op func(*state)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: %s: %w", what, err)
	}
	done := make(chan struct{})
	select {
	case q.ops <- func(st *state) { op(st); close(done) }:
	case <-ctx.Done():
		return fmt.Errorf("deadletter: %s: %w", what, ctx.Err())
	case <-q.closed:
		return fmt.Errorf("deadletter: %s: %w", what, ErrClosed)
	}
	<-done
	return nil
}

// sweep ends, at its Expires instant, every delivery whose Expires has
// come, in the order they expired: a last delivery goes to the DLQ.
func (st *state) sweep(now time.Time) {
	var ended []*entry
	for _, e := range st.tasks {
		if e.delivered && !now.Before(e.expires) {
			ended = append(ended, e)
		}
	}
	slices.SortFunc(ended, func(a, b *entry) int {
		if c := a.expires.Compare(b.expires); c != 0 {
			return c
		}
		return int(a.seq) - int(b.seq)
	})
	for _, e := range ended {
		st.endDelivery(e)
		if e.deliveries >= st.max {
			st.bury(e, ReasonMaxDeliveries)
		}
	}
}

func (st *state) endDelivery(e *entry) {
	delete(st.receipts, e.receipt)
	e.delivered, e.receipt, e.consumer, e.expires = false, "", "", time.Time{}
}

// bury moves e from the main queue to the DLQ.
func (st *state) bury(e *entry, why DeadLetterReason) {
	delete(st.tasks, e.task.ID)
	st.dlq = append(st.dlq, DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastErr, Reason: why})
}

func (st *state) dead(id string) int {
	return slices.IndexFunc(st.dlq, func(d DeadLetter) bool { return d.Task.ID == id })
}

func (st *state) push(t Task) {
	st.seq++
	st.tasks[t.ID] = &entry{task: t, seq: st.seq}
}

// current returns the entry whose current delivery r is, or nil.
func (st *state) current(r Receipt, now time.Time) *entry {
	e := st.receipts[r]
	if e == nil || !e.delivered || e.receipt != r || !now.Before(e.expires) {
		return nil
	}
	return e
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: enqueue: %w", err)
	}
	if t.ID == "" {
		return fmt.Errorf("deadletter: enqueue: %w", ErrNoTaskID)
	}
	var verdict error
	err := q.exec(ctx, "enqueue", func(st *state) {
		st.sweep(time.Now())
		if _, ok := st.tasks[t.ID]; ok || st.dead(t.ID) >= 0 {
			verdict = fmt.Errorf("deadletter: enqueue %q: %w", t.ID, ErrDuplicateMessage)
			return
		}
		st.push(t)
	})
	if err != nil {
		return err
	}
	return verdict
}

// check runs the validator, turning a panic into an error naming its value.
func (q *Queue) check(t Task) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("validator panicked: %v", p)
		}
	}()
	return q.validate(t)
}

// Receive delivers the visible task that was enqueued (or redriven)
// earliest to consumer.
func (q *Queue) Receive(ctx context.Context, consumer string) (Message, error) {
	for {
		var cand *entry
		var task Task
		var msg Message
		var verdict error
		err := q.exec(ctx, "receive", func(st *state) {
			now := time.Now()
			st.sweep(now)
			for _, e := range st.tasks {
				if !e.delivered && !e.validating && (cand == nil || e.seq < cand.seq) {
					cand = e
				}
			}
			switch {
			case cand == nil:
				verdict = fmt.Errorf("deadletter: receive for %s: %w", consumer, ErrNoMessage)
			case q.validate == nil:
				msg = st.deliver(cand, consumer, now)
			default:
				cand.validating = true
				task = cand.task
			}
		})
		if err != nil {
			return Message{}, err
		}
		if verdict != nil || q.validate == nil {
			return msg, verdict
		}
		verr := q.check(task)
		// back to the actor whatever ctx says now: the reservation must end
		err = q.exec(context.WithoutCancel(ctx), "receive", func(st *state) {
			cand.validating = false
			if verr != nil {
				cand.lastErr = verr.Error()
				st.bury(cand, ReasonMalformed)
				return
			}
			msg = st.deliver(cand, consumer, time.Now())
		})
		if err != nil {
			return Message{}, err
		}
		if verr == nil {
			return msg, nil
		}
	}
}

func (st *state) deliver(e *entry, consumer string, now time.Time) Message {
	st.nReceipt++
	e.deliveries++
	e.delivered = true
	e.receipt = Receipt(fmt.Sprintf("rcpt-%d-%s", st.nReceipt, e.task.ID))
	e.consumer = consumer
	e.expires = now.Add(st.vis)
	st.receipts[e.receipt] = e
	return Message{Task: e.task, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}
}

// Ack acknowledges the delivery of r: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	var verdict error
	err := q.exec(ctx, "ack", func(st *state) {
		now := time.Now()
		st.sweep(now)
		e := st.current(r, now)
		if e == nil {
			verdict = fmt.Errorf("deadletter: ack %q: %w", r, ErrDeliveryLost)
			return
		}
		st.endDelivery(e)
		delete(st.tasks, e.task.ID)
	})
	if err != nil {
		return err
	}
	return verdict
}

// Nack reports that the delivery of r failed with cause.
func (q *Queue) Nack(ctx context.Context, r Receipt, cause error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: nack: %w", err)
	}
	if cause == nil {
		return fmt.Errorf("deadletter: nack %q: %w", r, ErrNoCause)
	}
	text := cause.Error() // outside the actor: it may be slow
	var verdict error
	err := q.exec(ctx, "nack", func(st *state) {
		now := time.Now()
		st.sweep(now)
		e := st.current(r, now)
		if e == nil {
			verdict = fmt.Errorf("deadletter: nack %q: %w", r, ErrDeliveryLost)
			return
		}
		st.endDelivery(e)
		e.lastErr = text
		if e.deliveries >= st.max {
			st.bury(e, ReasonMaxDeliveries)
		}
	})
	if err != nil {
		return err
	}
	return verdict
}

// List returns the dead-letter queue, oldest dead letter first, as a copy.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	var out []DeadLetter
	err := q.exec(ctx, "list", func(st *state) {
		st.sweep(time.Now())
		out = slices.Clone(st.dlq)
	})
	return out, err
}

// Redrive moves the dead letter of taskID back to the main queue, at its
// back, with a fresh count and no last error.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	var verdict error
	err := q.exec(ctx, "redrive", func(st *state) {
		st.sweep(time.Now())
		i := st.dead(taskID)
		if i < 0 {
			verdict = fmt.Errorf("deadletter: redrive %q: %w", taskID, ErrNotDeadLettered)
			return
		}
		d := st.dlq[i]
		st.dlq = slices.Delete(st.dlq, i, i+1)
		st.push(d.Task)
		st.tasks[d.Task.ID].lastErr = d.LastError // keep the history for the operator
	})
	if err != nil {
		return err
	}
	return verdict
}
