// Package deadletter is a task queue that counts deliveries and parks a
// task in a dead-letter queue when it keeps failing, so that one poison
// message cannot crash its consumers forever.
package deadletter

import (
	"context"
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

// entry is one task in the main queue.
type entry struct {
	t          Task
	seq        uint64 // enqueue (or redrive) order
	deliveries int
	lastErr    string
	receipt    Receipt // current delivery's receipt, "" when none
	expires    time.Time
	validating bool // a Receive is validating it right now
}

// Queue is an in-memory task queue with a dead-letter queue beside it. It
// is safe for concurrent use. Build it with New.
type Queue struct {
	max      int
	timeout  time.Duration
	validate func(Task) error

	mu       sync.Mutex
	seq      uint64
	receipts uint64
	main     []*entry           // in seq order
	byID     map[string]*entry  // main queue by task ID
	byRcpt   map[Receipt]*entry // current deliveries
	dlq      []DeadLetter
	dlqIDs   map[string]bool
}

// New returns an empty queue.
func New(opts Options) (*Queue, error) {
	if opts.MaxDeliveries < 0 {
		return nil, fmt.Errorf("deadletter: MaxDeliveries %d: %w", opts.MaxDeliveries, ErrInvalidOptions)
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxDeliveryTimeout {
		return nil, fmt.Errorf("deadletter: VisibilityTimeout %v: %w", opts.VisibilityTimeout, ErrInvalidOptions)
	}
	q := &Queue{
		max:      opts.MaxDeliveries,
		timeout:  opts.VisibilityTimeout,
		validate: opts.Validate,
		byID:     map[string]*entry{},
		byRcpt:   map[Receipt]*entry{},
		dlqIDs:   map[string]bool{},
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

// settle ends every delivery whose Expires has passed, as of now: the task
// becomes visible again or, after its last delivery, is dead-lettered, in
// the order the deliveries expired. Callers hold q.mu.
func (q *Queue) settle(now time.Time) {
	var expired []*entry
	for _, e := range q.main {
		if e.receipt != "" && !now.Before(e.expires) {
			expired = append(expired, e)
		}
	}
	sort.SliceStable(expired, func(i, j int) bool { return expired[i].expires.Before(expired[j].expires) })
	for _, e := range expired {
		delete(q.byRcpt, e.receipt)
		e.receipt = ""
		if e.deliveries >= q.max {
			q.deadLetter(e, ReasonMaxDeliveries)
		}
	}
}

// deadLetter moves e from the main queue to the DLQ. Callers hold q.mu.
func (q *Queue) deadLetter(e *entry, reason DeadLetterReason) {
	if e.receipt != "" {
		delete(q.byRcpt, e.receipt)
		e.receipt = ""
	}
	q.removeMain(e)
	q.dlq = append(q.dlq, DeadLetter{Task: e.t, Deliveries: e.deliveries, LastError: e.lastErr, Reason: reason})
	q.dlqIDs[e.t.ID] = true
}

func (q *Queue) removeMain(e *entry) {
	delete(q.byID, e.t.ID)
	for i, x := range q.main {
		if x == e {
			q.main = append(q.main[:i:i], q.main[i+1:]...)
			return
		}
	}
}

func (q *Queue) push(t Task) {
	q.seq++
	e := &entry{t: t, seq: q.seq}
	q.main = append(q.main, e)
	q.byID[t.ID] = e
}

// Enqueue adds t to the queue, visible at once.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if t.ID == "" {
		return fmt.Errorf("deadletter: enqueue: %w", ErrNoTaskID)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settle(time.Now())
	if _, ok := q.byID[t.ID]; ok || q.dlqIDs[t.ID] {
		return fmt.Errorf("deadletter: enqueue %q: %w", t.ID, ErrDuplicateMessage)
	}
	q.push(t)
	return nil
}

// runValidate calls the validator, turning a panic into an error text.
func (q *Queue) runValidate(t Task) (ok bool, text string) {
	defer func() {
		if r := recover(); r != nil {
			ok, text = false, fmt.Sprintf("validator panicked: %v", r)
		}
	}()
	if err := q.validate(t); err != nil {
		return false, err.Error()
	}
	return true, ""
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
		q.settle(time.Now())
		var e *entry
		for _, x := range q.main {
			if x.receipt == "" && !x.validating {
				e = x
				break
			}
		}
		if e == nil {
			return Message{}, fmt.Errorf("deadletter: receive: %w", ErrNoMessage)
		}
		if q.validate != nil {
			e.validating = true
			q.mu.Unlock()
			ok, text := q.runValidate(e.t)
			q.mu.Lock()
			e.validating = false
			if !ok {
				e.lastErr = text
				q.deadLetter(e, ReasonMalformed)
				continue
			}
		}
		now := time.Now()
		q.settle(now)
		e.deliveries++
		q.receipts++
		e.receipt = Receipt("rcpt-" + strconv.FormatUint(q.receipts, 10))
		e.expires = now.Add(q.timeout)
		q.byRcpt[e.receipt] = e
		return Message{Task: e.t, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}, nil
	}
}

// Ack acknowledges the delivery of r: the task leaves the queue.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settle(time.Now())
	e, ok := q.byRcpt[r]
	if !ok || r == "" {
		return fmt.Errorf("deadletter: ack: %w", ErrDeliveryLost)
	}
	delete(q.byRcpt, r)
	q.removeMain(e)
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
	text := cause.Error() // may be slow: read it before taking the lock
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settle(time.Now())
	e, ok := q.byRcpt[r]
	if !ok || r == "" {
		return fmt.Errorf("deadletter: nack: %w", ErrDeliveryLost)
	}
	delete(q.byRcpt, r)
	e.receipt = ""
	e.lastErr = text
	if e.deliveries >= q.max {
		q.deadLetter(e, ReasonMaxDeliveries)
		return nil
	}
	// visible again: requeue it for the next consumer
	q.removeMain(e)
	q.seq++
	e.seq = q.seq
	q.main = append(q.main, e)
	q.byID[e.t.ID] = e
	return nil
}

// List returns the dead-letter queue, oldest dead letter first, as a copy.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settle(time.Now())
	out := make([]DeadLetter, len(q.dlq))
	copy(out, q.dlq)
	return out, nil
}

// Redrive moves the dead letter of taskID back to the main queue, at its
// back, with a fresh count and no last error.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.settle(time.Now())
	if !q.dlqIDs[taskID] {
		return fmt.Errorf("deadletter: redrive %q: %w", taskID, ErrNotDeadLettered)
	}
	for i, d := range q.dlq {
		if d.Task.ID == taskID {
			q.dlq = append(q.dlq[:i:i], q.dlq[i+1:]...)
			delete(q.dlqIDs, taskID)
			q.push(d.Task)
			return nil
		}
	}
	return fmt.Errorf("deadletter: redrive %q: %w", taskID, ErrNotDeadLettered)
}
