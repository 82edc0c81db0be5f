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
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
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

// Queue is an in-memory task queue with a dead-letter queue beside it,
// safe for concurrent use. Build it with New.
//
// One mutex guards both queues, so a task moves from one to the other in a
// single critical section: nobody can see it in both, or in neither.
//
// A task is visible when it has no delivery in progress. A delivery that
// ends by its visibility timeout needs no timer: every method first sweeps
// the queue (see sweep), so the task is visible again, or dead-lettered,
// from the instant its delivery expired, whoever looks next.
type Queue struct {
	maxDeliveries int
	visibility    time.Duration
	validate      func(Task) error

	mu        sync.Mutex
	ready     map[string]*entry   // the main queue, by task id
	byReceipt map[Receipt]*entry  // the entry of every delivery in progress
	dead      []DeadLetter        // the dead-letter queue, oldest first
	deadIDs   map[string]struct{} // the task ids in dead
	next      int64               // enqueue order
}

type entry struct {
	task       Task
	seq        int64     // enqueue order: among visible tasks, the oldest goes first
	receipt    Receipt   // the delivery in progress, "" when there is none: then the task is visible
	expires    time.Time // when the delivery in progress ends
	deliveries int       // deliveries so far, counted as each one is made
	lastError  string    // the last failure recorded, "" when none
}

// New returns an empty queue. opts.MaxDeliveries zero means
// DefaultMaxDeliveries, opts.VisibilityTimeout zero means
// DefaultDeliveryTimeout; a negative MaxDeliveries, or a visibility timeout
// below zero or above MaxDeliveryTimeout, is an error wrapping
// ErrInvalidOptions.
func New(opts Options) (*Queue, error) {
	if opts.MaxDeliveries < 0 {
		return nil, fmt.Errorf("deadletter: new queue: max deliveries %d: %w (want 0 for the default, or more)", opts.MaxDeliveries, ErrInvalidOptions)
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxDeliveryTimeout {
		return nil, fmt.Errorf("deadletter: new queue: visibility timeout %v: %w (want 0 for the default, or up to %v)", opts.VisibilityTimeout, ErrInvalidOptions, MaxDeliveryTimeout)
	}
	return &Queue{
		maxDeliveries: cmp.Or(opts.MaxDeliveries, DefaultMaxDeliveries),
		visibility:    cmp.Or(opts.VisibilityTimeout, DefaultDeliveryTimeout),
		validate:      opts.Validate,
		ready:         map[string]*entry{},
		byReceipt:     map[Receipt]*entry{},
		deadIDs:       map[string]struct{}{},
	}, nil
}

// lock locks the queue, settles every delivery that has expired by now
// (see sweep) and returns now. The caller unlocks q.mu.
func (q *Queue) lock() time.Time {
	q.mu.Lock()
	now := time.Now()
	q.sweep(now)
	return now
}

// sweep ends every delivery whose visibility timeout has passed by now: its
// receipt is dead, and a task whose last allowed delivery it was is
// dead-lettered, in the order the deliveries expired. Nobody reported
// anything, so the task keeps the last error it had.
func (q *Queue) sweep(now time.Time) {
	var expired []*entry
	for _, e := range q.ready {
		if e.receipt != "" && !now.Before(e.expires) {
			expired = append(expired, e)
		}
	}
	slices.SortFunc(expired, func(a, b *entry) int {
		return cmp.Or(a.expires.Compare(b.expires), cmp.Compare(a.seq, b.seq))
	})
	for _, e := range expired {
		delete(q.byReceipt, e.receipt)
		e.receipt = ""
		if e.deliveries >= q.maxDeliveries {
			q.deadLetter(e, ReasonMaxDeliveries)
		}
	}
}

// deadLetter moves e from the main queue to the dead-letter queue. q.mu is
// held, so the move is one step to everyone else.
func (q *Queue) deadLetter(e *entry, reason DeadLetterReason) {
	delete(q.ready, e.task.ID)
	delete(q.byReceipt, e.receipt) // a dead letter has no delivery in progress
	q.dead = append(q.dead, DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastError, Reason: reason})
	q.deadIDs[e.task.ID] = struct{}{}
}

// add puts t at the back of the main queue, visible, with no deliveries
// counted. q.mu is held.
func (q *Queue) add(t Task) {
	q.next++
	q.ready[t.ID] = &entry{task: t, seq: q.next}
}

// Enqueue adds t to the queue, visible at once. A task without an ID is an
// error wrapping ErrNoTaskID; a task whose ID is already in the queue or in
// the dead-letter queue is an error wrapping ErrDuplicateMessage, and
// nothing changes.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: enqueue %s: %w", t.ID, err)
	}
	if t.ID == "" {
		return fmt.Errorf("deadletter: enqueue: %w", ErrNoTaskID)
	}
	q.lock()
	defer q.mu.Unlock()
	_, queued := q.ready[t.ID]
	_, parked := q.deadIDs[t.ID]
	if queued || parked {
		return fmt.Errorf("deadletter: enqueue %s: %w", t.ID, ErrDuplicateMessage)
	}
	q.add(t)
	return nil
}

// Receive delivers the visible task that was enqueued (or redriven)
// earliest to consumer. The delivery is counted now, as it is made: the
// returned Message's Deliveries is one more than the task's previous
// delivery had, however that one ended. The task stays invisible until
// the Message's Expires, the visibility timeout from now. Before each
// delivery the task is validated; a task the validator rejects is
// dead-lettered at once, uncounted, and Receive goes on to the next one.
// With no visible task, Receive returns an error wrapping ErrNoMessage.
func (q *Queue) Receive(ctx context.Context, consumer string) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("deadletter: receive for %s: %w", consumer, err)
	}
	now := q.lock()
	defer q.mu.Unlock()
	// Park every malformed visible task first, so that the queue holds only
	// deliverable work.
	for _, e := range q.ready {
		if e.receipt != "" {
			continue
		}
		if err := q.check(e.task); err != nil {
			e.lastError = err.Error()
			q.deadLetter(e, ReasonMalformed)
		}
	}
	for {
		e := q.oldestVisible()
		if e == nil {
			return Message{}, fmt.Errorf("deadletter: receive for %s: %w", consumer, ErrNoMessage)
		}
		if err := q.check(e.task); err != nil {
			e.lastError = err.Error()
			q.deadLetter(e, ReasonMalformed)
			continue
		}
		e.deliveries++
		e.receipt = Receipt(rand.Text())
		e.expires = now.Add(q.visibility)
		q.byReceipt[e.receipt] = e
		return Message{Task: e.task, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}, nil
	}
}

// oldestVisible returns the visible entry with the lowest enqueue order,
// or nil. q.mu is held and the queue swept, so an entry is visible exactly
// when it has no delivery in progress: an expired delivery has been
// settled, and nothing in this queue is delayed.
func (q *Queue) oldestVisible() *entry {
	var pick *entry
	for _, e := range q.ready {
		if e.receipt != "" {
			continue
		}
		if pick == nil || e.seq < pick.seq {
			pick = e
		}
	}
	return pick
}

// check runs the validator on t. A validator that panics has found a task
// it cannot handle, so its panic is a validation error like any other:
// letting it through would crash every Receive that picks the task.
func (q *Queue) check(t Task) (err error) {
	if q.validate == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return q.validate(t)
}

// current returns the entry whose delivery in progress r is, or an error
// wrapping ErrDeliveryLost. q.mu is held and the queue swept, so an expired
// delivery's receipt is already gone.
func (q *Queue) current(r Receipt) (*entry, error) {
	e, ok := q.byReceipt[r]
	if !ok {
		return nil, fmt.Errorf("receipt %.8q: %w", r, ErrDeliveryLost) // its first 8 characters are enough to tell receipts apart in a log
	}
	return e, nil
}

// Ack acknowledges the delivery of r: the task leaves the queue and is
// never delivered again. Only the current delivery's receipt acknowledges:
// any other gets an error wrapping ErrDeliveryLost, and nothing changes.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: ack: %w", err)
	}
	q.lock()
	defer q.mu.Unlock()
	e, err := q.current(r)
	if err != nil {
		return fmt.Errorf("deadletter: ack: %w", err)
	}
	delete(q.byReceipt, r)
	delete(q.ready, e.task.ID)
	return nil
}

// Nack reports that the delivery of r failed with cause, whose text
// becomes the task's last error. If that was the task's last allowed
// delivery, the task is dead-lettered now; otherwise it is visible again
// at once. Only the current delivery's receipt nacks: any other gets an
// error wrapping ErrDeliveryLost, a nil cause an error wrapping ErrNoCause,
// and then nothing changes.
func (q *Queue) Nack(ctx context.Context, r Receipt, cause error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: nack: %w", err)
	}
	if cause == nil {
		return fmt.Errorf("deadletter: nack: %w", ErrNoCause)
	}
	q.lock()
	defer q.mu.Unlock()
	e, err := q.current(r)
	if err != nil {
		return fmt.Errorf("deadletter: nack: %w", err)
	}
	e.lastError = cause.Error()
	if e.deliveries >= q.maxDeliveries {
		q.deadLetter(e, ReasonMaxDeliveries)
		return nil
	}
	delete(q.byReceipt, r)
	e.receipt = "" // visible again
	return nil
}

// List returns the dead-letter queue, oldest dead letter first. It is a
// copy: changing it changes nothing in the queue.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("deadletter: list: %w", err)
	}
	q.lock()
	defer q.mu.Unlock()
	return slices.Clone(q.dead), nil
}

// Redrive moves the dead letter of taskID back to the main queue, at its
// back and visible at once, as if it had just been enqueued: its delivery
// count starts again from zero and its last error is forgotten, so it gets
// MaxDeliveries fresh deliveries (and is validated again before each). A
// task that is not in the dead-letter queue is an error wrapping
// ErrNotDeadLettered.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deadletter: redrive %s: %w", taskID, err)
	}
	q.lock()
	defer q.mu.Unlock()
	i := slices.IndexFunc(q.dead, func(d DeadLetter) bool { return d.Task.ID == taskID })
	if i < 0 {
		return fmt.Errorf("deadletter: redrive %s: %w", taskID, ErrNotDeadLettered)
	}
	t := q.dead[i].Task
	q.dead = slices.Delete(q.dead, i, i+1)
	delete(q.deadIDs, taskID)
	q.add(t)
	return nil
}
