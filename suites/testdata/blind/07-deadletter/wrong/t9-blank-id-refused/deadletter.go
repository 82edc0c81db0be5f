// Package deadletter is a task queue that counts deliveries and parks a
// task in a dead-letter queue when it keeps failing, so that one poison
// message cannot crash its consumers forever.
package deadletter

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

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

// entry is a task in the main queue.
type entry struct {
	task       Task
	seq        uint64 // enqueue (or redrive) order
	deliveries int    // since enqueued or redriven
	lastErr    string
	receipt    Receipt   // current delivery, "" when none
	expires    time.Time // current delivery's end
	validating bool      // a Receive is validating it, outside the lock
}

// Queue is an in-memory task queue with a dead-letter queue beside it. It
// is safe for concurrent use. Build it with New.
type Queue struct {
	max      int
	timeout  time.Duration
	validate func(Task) error

	mu        sync.Mutex
	nextSeq   uint64
	nextRcpt  uint64
	order     []*entry // the main queue, by seq
	byID      map[string]*entry
	byReceipt map[Receipt]*entry // current deliveries only
	dlq       []DeadLetter       // oldest first
	dlIDs     map[string]bool
}

// New returns an empty queue.
func New(opts Options) (*Queue, error) {
	if opts.MaxDeliveries < 0 {
		return nil, fmt.Errorf("deadletter: max deliveries %d: %w", opts.MaxDeliveries, ErrInvalidOptions)
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxDeliveryTimeout {
		return nil, fmt.Errorf("deadletter: visibility timeout %v: %w", opts.VisibilityTimeout, ErrInvalidOptions)
	}
	q := &Queue{
		max:       opts.MaxDeliveries,
		timeout:   opts.VisibilityTimeout,
		validate:  opts.Validate,
		byID:      make(map[string]*entry),
		byReceipt: make(map[Receipt]*entry),
		dlIDs:     make(map[string]bool),
	}
	if q.max == 0 {
		q.max = DefaultMaxDeliveries
	}
	if q.timeout == 0 {
		q.timeout = DefaultDeliveryTimeout
	}
	return q, nil
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: %w", err)
	}
	return nil
}

// remove takes e out of the main queue. q.mu is held.
func (q *Queue) remove(e *entry) {
	if e.receipt != "" {
		delete(q.byReceipt, e.receipt)
		e.receipt = ""
	}
	delete(q.byID, e.task.ID)
	for i, x := range q.order {
		if x == e {
			q.order = append(q.order[:i:i], q.order[i+1:]...)
			return
		}
	}
}

// deadLetter moves e from the main queue to the DLQ, in one step. q.mu is
// held.
func (q *Queue) deadLetter(e *entry, reason DeadLetterReason) {
	q.remove(e)
	q.dlq = append(q.dlq, DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastErr, Reason: reason})
	q.dlIDs[e.task.ID] = true
}

// expire ends every delivery whose Expires has come: the task is visible
// again, or dead-lettered if that was its last delivery, in the order the
// deliveries expired. q.mu is held.
func (q *Queue) expire(now time.Time) {
	var last []*entry
	for _, e := range q.order {
		if e.receipt == "" || now.Before(e.expires) {
			continue
		}
		delete(q.byReceipt, e.receipt)
		e.receipt = ""
		if e.deliveries >= q.max {
			last = append(last, e)
		}
	}
	sort.SliceStable(last, func(i, j int) bool { return last[i].expires.Before(last[j].expires) })
	for _, e := range last {
		q.deadLetter(e, ReasonMaxDeliveries)
	}
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if strings.TrimSpace(t.ID) == "" {
		return fmt.Errorf("deadletter: enqueue: %w", ErrNoTaskID)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(time.Now())
	if _, ok := q.byID[t.ID]; ok || q.dlIDs[t.ID] {
		return fmt.Errorf("deadletter: enqueue %q: %w", t.ID, ErrDuplicateMessage)
	}
	q.push(t)
	return nil
}

// push adds t at the back of the main queue. q.mu is held.
func (q *Queue) push(t Task) {
	q.nextSeq++
	e := &entry{task: t, seq: q.nextSeq}
	q.byID[t.ID] = e
	q.order = append(q.order, e)
}

// check runs the validator on t, turning a panic into an error.
func (q *Queue) check(t Task) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return q.validate(t)
}

// Receive delivers the visible task that was enqueued (or redriven)
// earliest to consumer.
func (q *Queue) Receive(ctx context.Context, consumer string) (Message, error) {
	if err := ctxErr(ctx); err != nil {
		return Message{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		q.expire(time.Now())
		var e *entry
		for _, x := range q.order {
			if x.receipt == "" && !x.validating {
				e = x
				break
			}
		}
		if e == nil {
			return Message{}, fmt.Errorf("deadletter: receive: %w", ErrNoMessage)
		}
		if q.validate != nil {
			// Validate outside the lock: the task stays in the main
			// queue, invisible to other Receives, while it is looked at.
			e.validating = true
			t := e.task
			q.mu.Unlock()
			verr := q.check(t)
			q.mu.Lock()
			e.validating = false
			if err := ctxErr(ctx); err != nil {
				return Message{}, err
			}
			if verr != nil {
				e.lastErr = verr.Error()
				q.deadLetter(e, ReasonMalformed)
				continue
			}
		}
		now := time.Now()
		q.nextRcpt++
		e.receipt = Receipt("rc-" + strconv.FormatUint(q.nextRcpt, 10))
		e.expires = now.Add(q.timeout)
		e.deliveries++
		q.byReceipt[e.receipt] = e
		return Message{Task: e.task, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}, nil
	}
}

// Ack acknowledges the delivery of r: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(time.Now())
	e, ok := q.byReceipt[r]
	if !ok {
		return fmt.Errorf("deadletter: ack: %w", ErrDeliveryLost)
	}
	q.remove(e)
	return nil
}

// Nack reports that the delivery of r failed with cause.
func (q *Queue) Nack(ctx context.Context, r Receipt, cause error) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if cause == nil {
		return fmt.Errorf("deadletter: nack: %w", ErrNoCause)
	}
	// The cause's text is read before the lock: a slow Error method holds
	// up no one else.
	text := cause.Error()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(time.Now())
	e, ok := q.byReceipt[r]
	if !ok {
		return fmt.Errorf("deadletter: nack: %w", ErrDeliveryLost)
	}
	delete(q.byReceipt, r)
	e.receipt = ""
	e.lastErr = text
	if e.deliveries >= q.max {
		q.deadLetter(e, ReasonMaxDeliveries)
	}
	return nil
}

// List returns the dead-letter queue, oldest dead letter first, as a copy.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(time.Now())
	return append([]DeadLetter(nil), q.dlq...), nil
}

// Redrive moves the dead letter of taskID back to the main queue, at its
// back, with a fresh count.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(time.Now())
	if !q.dlIDs[taskID] {
		return fmt.Errorf("deadletter: redrive %q: %w", taskID, ErrNotDeadLettered)
	}
	for i, d := range q.dlq {
		if d.Task.ID == taskID {
			q.dlq = append(q.dlq[:i:i], q.dlq[i+1:]...)
			delete(q.dlIDs, taskID)
			q.push(d.Task)
			return nil
		}
	}
	return fmt.Errorf("deadletter: redrive %q: %w", taskID, ErrNotDeadLettered)
}
