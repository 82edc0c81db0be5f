// Package deadletter is a task queue that counts deliveries and parks a
// task in a dead-letter queue when it keeps failing.
//
// This version is an actor: one goroutine owns both queues, and every
// method hands it a closure to run. Every move between the two queues is
// therefore one step by construction. Close stops the goroutine.
package deadletter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

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

// errClosed is returned by every method of a closed queue.
var errClosed = errors.New("deadletter: queue closed")

type entry struct {
	task       Task
	seq        uint64 // place in the queue: enqueue (or redrive) order
	deliveries int
	lastErr    string
	inFlight   bool
	receipt    Receipt
	expires    time.Time
}

// state is owned by the actor goroutine only.
type state struct {
	max    int
	vt     time.Duration
	valid  func(Task) error
	seq    uint64
	rseq   uint64
	main   map[string]*entry
	byRcpt map[Receipt]string
	dlq    []DeadLetter
	dlqIDs map[string]bool
}

// Queue is an in-memory task queue with a dead-letter queue beside it.
type Queue struct {
	reqs      chan func(*state)
	done      chan struct{}
	closeOnce sync.Once
}

// New returns an empty queue and starts its actor.
func New(opts Options) (*Queue, error) {
	if opts.MaxDeliveries < 0 {
		return nil, fmt.Errorf("max deliveries %d: %w", opts.MaxDeliveries, ErrInvalidOptions)
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxDeliveryTimeout {
		return nil, fmt.Errorf("visibility timeout %v: %w", opts.VisibilityTimeout, ErrInvalidOptions)
	}
	st := &state{
		max: opts.MaxDeliveries, vt: opts.VisibilityTimeout, valid: opts.Validate,
		main: map[string]*entry{}, byRcpt: map[Receipt]string{}, dlqIDs: map[string]bool{},
	}
	if st.max == 0 {
		st.max = DefaultMaxDeliveries
	}
	if st.vt == 0 {
		st.vt = DefaultDeliveryTimeout
	}
	q := &Queue{reqs: make(chan func(*state)), done: make(chan struct{})}
	go func() {
		for {
			select {
			case f := <-q.reqs:
				f(st)
			case <-q.done:
				return
			}
		}
	}()
	return q, nil
}

// Close stops the queue's goroutine. Later calls fail.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() { close(q.done) })
	return nil
}

// do runs f on the actor and waits for it. f runs only if ctx is not done
// when the actor picks it up.
func (q *Queue) do(ctx context.Context, f func(*state) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	res := make(chan error, 1)
	req := func(st *state) {
		if err := ctx.Err(); err != nil {
			res <- err
			return
		}
		st.settle(time.Now())
		res <- f(st)
	}
	select {
	case q.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-q.done:
		return errClosed
	}
	return <-res
}

// settle ends every delivery whose Expires is not after now, in the order
// they expired, dead-lettering those that were last deliveries.
func (st *state) settle(now time.Time) {
	var ended []*entry
	for _, e := range st.main {
		if e.inFlight && now.After(e.expires) {
			ended = append(ended, e)
		}
	}
	sort.Slice(ended, func(i, j int) bool {
		if !ended[i].expires.Equal(ended[j].expires) {
			return ended[i].expires.Before(ended[j].expires)
		}
		return ended[i].seq < ended[j].seq
	})
	for _, e := range ended {
		st.endDelivery(e)
		if e.deliveries >= st.max {
			st.park(e, ReasonMaxDeliveries)
		}
	}
}

func (st *state) endDelivery(e *entry) {
	delete(st.byRcpt, e.receipt)
	e.inFlight = false
	e.receipt = ""
}

func (st *state) park(e *entry, reason DeadLetterReason) {
	delete(st.main, e.task.ID)
	st.dlq = append(st.dlq, DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastErr, Reason: reason})
	st.dlqIDs[e.task.ID] = true
}

// validate runs the validator, turning a panic into an error.
func (st *state) validate(t Task) (err error) {
	if st.valid == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return st.valid(t)
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	if t.ID == "" {
		return fmt.Errorf("enqueue: %w", ErrNoTaskID)
	}
	return q.do(ctx, func(st *state) error {
		if _, ok := st.main[t.ID]; ok || st.dlqIDs[t.ID] {
			return fmt.Errorf("enqueue %q: %w", t.ID, ErrDuplicateMessage)
		}
		st.seq++
		st.main[t.ID] = &entry{task: t, seq: st.seq}
		return nil
	})
}

// Receive delivers the visible task that was enqueued (or redriven)
// earliest to consumer.
func (q *Queue) Receive(ctx context.Context, consumer string) (Message, error) {
	var msg Message
	err := q.do(ctx, func(st *state) error {
		visible := make([]*entry, 0, len(st.main))
		for _, e := range st.main {
			if !e.inFlight {
				visible = append(visible, e)
			}
		}
		sort.Slice(visible, func(i, j int) bool { return visible[i].seq < visible[j].seq })
		for _, e := range visible {
			if verr := st.validate(e.task); verr != nil {
				e.lastErr = verr.Error()
				st.park(e, ReasonMalformed)
				continue
			}
			now := time.Now()
			st.rseq++
			e.deliveries++
			e.inFlight = true
			e.receipt = Receipt(e.task.ID + "#" + strconv.FormatUint(st.rseq, 10))
			e.expires = now.Add(st.vt)
			st.byRcpt[e.receipt] = e.task.ID
			msg = Message{Task: e.task, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}
			return nil
		}
		return ErrNoMessage
	})
	if err != nil {
		return Message{}, fmt.Errorf("receive for %s: %w", consumer, err)
	}
	return msg, nil
}

// current returns the entry whose current delivery r is.
func (st *state) current(r Receipt) (*entry, bool) {
	id, ok := st.byRcpt[r]
	if !ok {
		return nil, false
	}
	e, ok := st.main[id]
	if !ok || !e.inFlight || e.receipt != r {
		return nil, false
	}
	return e, true
}

// Ack acknowledges the delivery of r: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	return q.do(ctx, func(st *state) error {
		e, ok := st.current(r)
		if !ok {
			return fmt.Errorf("ack %q: %w", r, ErrDeliveryLost)
		}
		st.endDelivery(e)
		delete(st.main, e.task.ID)
		return nil
	})
}

// Nack reports that the delivery of r failed with cause.
func (q *Queue) Nack(ctx context.Context, r Receipt, cause error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nack: %w", err)
	}
	if cause == nil {
		return fmt.Errorf("nack %q: %w", r, ErrNoCause)
	}
	text := cause.Error() // outside the actor: a slow Error stalls nobody else
	return q.do(ctx, func(st *state) error {
		e, ok := st.current(r)
		if !ok {
			return fmt.Errorf("nack %q: %w", r, ErrDeliveryLost)
		}
		e.lastErr = text
		st.endDelivery(e)
		if e.deliveries >= st.max {
			st.park(e, ReasonMaxDeliveries)
		}
		return nil
	})
}

// List returns a copy of the dead-letter queue, oldest first.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	var out []DeadLetter
	err := q.do(ctx, func(st *state) error {
		out = append([]DeadLetter(nil), st.dlq...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	return out, nil
}

// Redrive moves the dead letter of taskID back to the back of the main
// queue with a fresh count and no last error.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	return q.do(ctx, func(st *state) error {
		if !st.dlqIDs[taskID] {
			return fmt.Errorf("redrive %q: %w", taskID, ErrNotDeadLettered)
		}
		for i, d := range st.dlq {
			if d.Task.ID == taskID {
				st.dlq = append(st.dlq[:i:i], st.dlq[i+1:]...)
				delete(st.dlqIDs, taskID)
				st.seq++
				st.main[taskID] = &entry{task: d.Task, seq: st.seq}
				return nil
			}
		}
		return fmt.Errorf("redrive %q: %w", taskID, ErrNotDeadLettered)
	})
}
