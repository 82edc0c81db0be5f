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

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// the queue works.
var ErrNotImplemented = errors.New("deadletter: not implemented yet (TODO in labs/07-deadletter/deadletter.go)")

// Queue is an in-memory task queue with a dead-letter queue beside it. It
// must be safe for concurrent use. Build it with New.
type Queue struct {
	// TODO: the main queue (each task with its delivery in progress, its
	// delivery count and its last error), the dead-letter queue, and
	// whatever keeps concurrent callers safe and makes a move between the
	// two one step.
}

// New returns an empty queue. opts.MaxDeliveries zero means
// DefaultMaxDeliveries, opts.VisibilityTimeout zero means
// DefaultDeliveryTimeout; a negative MaxDeliveries, or a visibility timeout
// below zero or above MaxDeliveryTimeout, is an error wrapping
// ErrInvalidOptions. opts.Validate, when not nil, is called on a task
// before each of its deliveries.
func New(opts Options) (*Queue, error) {
	// TODO: implement. Start with the README's "What to implement".
	return nil, ErrNotImplemented
}

// Enqueue adds t to the queue, visible at once. A task without an ID is an
// error wrapping ErrNoTaskID; a task whose ID is already in the queue or in
// the dead-letter queue is an error wrapping ErrDuplicateMessage, and
// nothing changes.
func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	return ErrNotImplemented
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
	return Message{}, ErrNotImplemented
}

// Ack acknowledges the delivery of r: the task leaves the queue and is
// never delivered again. Only the current delivery's receipt acknowledges:
// any other gets an error wrapping ErrDeliveryLost, and nothing changes.
func (q *Queue) Ack(ctx context.Context, r Receipt) error {
	return ErrNotImplemented
}

// Nack reports that the delivery of r failed with cause, whose text
// becomes the task's last error. If that was the task's last allowed
// delivery, the task is dead-lettered now; otherwise it is visible again
// at once. Only the current delivery's receipt nacks: any other gets an
// error wrapping ErrDeliveryLost, a nil cause an error wrapping ErrNoCause,
// and then nothing changes.
func (q *Queue) Nack(ctx context.Context, r Receipt, cause error) error {
	return ErrNotImplemented
}

// List returns the dead-letter queue, oldest dead letter first. It is a
// copy: changing it changes nothing in the queue.
func (q *Queue) List(ctx context.Context) ([]DeadLetter, error) {
	return nil, ErrNotImplemented
}

// Redrive moves the dead letter of taskID back to the main queue, at its
// back and visible at once, as if it had just been enqueued: its delivery
// count starts again from zero and its last error is forgotten, so it gets
// MaxDeliveries fresh deliveries (and is validated again before each). A
// task that is not in the dead-letter queue is an error wrapping
// ErrNotDeadLettered.
func (q *Queue) Redrive(ctx context.Context, taskID string) error {
	return ErrNotImplemented
}
