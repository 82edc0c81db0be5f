package task

// Dead-lettering by delivery count (lab 07): a queue that counts every
// delivery of a task, parks a task in a dead-letter queue once it has been
// delivered MaxDeliveries times without an acknowledgement, parks a task
// its validator rejects before it reaches any consumer, and can redrive a
// parked task with a fresh count. The names are the lab's own (Receive,
// Receipt, Message) so that it stands alone beside lab 05's lease queue;
// the capstone's queue is both: its leases carry the delivery count that
// this file's Message.Deliveries describes, and its dead letters are
// DeadLetter values.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The limits of a dead-lettering queue. A task is delivered at most
// DefaultMaxDeliveries times unless DeadLetterOptions.MaxDeliveries says
// otherwise; a delivery is invisible to other consumers for
// DefaultDeliveryTimeout unless DeadLetterOptions.VisibilityTimeout says
// otherwise, and never for longer than MaxDeliveryTimeout.
const (
	DefaultMaxDeliveries   = 5
	DefaultDeliveryTimeout = 30 * time.Second
	MaxDeliveryTimeout     = 12 * time.Hour
)

// The errors of a dead-lettering queue, matched with errors.Is.
var (
	// ErrNoMessage means no task is visible right now: the queue is empty,
	// or every task in it is being delivered.
	ErrNoMessage = errors.New("no visible message")

	// ErrDeliveryLost means the receipt is not the receipt of a task's
	// current delivery any more, or never was: the delivery's visibility
	// timeout passed, the delivery was acknowledged or nacked, or the task
	// was dead-lettered. Its consumer must stop; the task is not its own.
	ErrDeliveryLost = errors.New("delivery lost")

	// ErrInvalidOptions means a queue was configured with a negative
	// MaxDeliveries or a visibility timeout out of range.
	ErrInvalidOptions = errors.New("invalid queue options")

	// ErrNoTaskID means a task cannot be enqueued: its ID is empty.
	ErrNoTaskID = errors.New("task has no ID")

	// ErrDuplicateMessage means a task with the same ID is already in the
	// queue or in its dead-letter queue.
	ErrDuplicateMessage = errors.New("duplicate message")

	// ErrNoCause means a Nack gave no error to record.
	ErrNoCause = errors.New("nack without a cause")

	// ErrNotDeadLettered means Redrive was asked for a task that is not in
	// the dead-letter queue.
	ErrNotDeadLettered = errors.New("not in the dead-letter queue")
)

// Receipt identifies one delivery of a task, like an SQS receipt handle:
// the queue makes up a new one for every delivery, and only the current
// delivery's receipt acknowledges or nacks the task. It is opaque: its
// holder may compare two receipts for equality and nothing else.
type Receipt string

// Message is one delivery of a task to one consumer: the task is invisible
// to every other consumer until Expires, and comes back by itself when the
// delivery ends without an acknowledgement.
type Message struct {
	Task Task

	// Receipt is this delivery's receipt, different from every other
	// delivery's, of this task or any other.
	Receipt Receipt

	// Consumer is the name of the consumer the task was delivered to.
	Consumer string

	// Deliveries counts the deliveries of the task, this one included: 1
	// for the first delivery, 2 for the next one, and so on. A redrive
	// starts the count again.
	Deliveries int

	// Expires is when the delivery ends unless it is acknowledged or
	// nacked first: the task is invisible while the queue's clock is
	// before Expires, and visible again (or dead-lettered) at Expires.
	Expires time.Time
}

// String renders the message for timelines:
// "task-1 to consumer A (delivery 2)".
func (m Message) String() string {
	return fmt.Sprintf("%s to %s (delivery %d)", m.Task.ID, m.Consumer, m.Deliveries)
}

// DeadLetterReason says why a task was dead-lettered.
type DeadLetterReason string

// The reasons for a dead letter.
const (
	// ReasonMaxDeliveries: the task's last allowed delivery ended without
	// an acknowledgement (a Nack, or a visibility timeout that passed).
	ReasonMaxDeliveries DeadLetterReason = "max deliveries"

	// ReasonMalformed: the queue's validator rejected the task before a
	// delivery.
	ReasonMalformed DeadLetterReason = "malformed"
)

// DeadLetter is a task parked in the dead-letter queue, with what an
// operator needs to decide whether to redrive it.
type DeadLetter struct {
	// Task is the task exactly as it was enqueued.
	Task Task

	// Deliveries is how many times the task was delivered before it was
	// dead-lettered (since it was enqueued or last redriven).
	Deliveries int

	// LastError is the text (Error()) of the last failure recorded for
	// the task: the cause given to its last Nack, or the validator's
	// error. It is empty when no failure was ever recorded: every
	// delivery's consumer crashed without a word.
	LastError string

	// Reason says why the task was dead-lettered.
	Reason DeadLetterReason
}

// String renders the dead letter for timelines:
// `task-1 after 3 deliveries (max deliveries, last error "timeout")`.
func (d DeadLetter) String() string {
	return fmt.Sprintf("%s after %d deliveries (%s, last error %q)", d.Task.ID, d.Deliveries, d.Reason, d.LastError)
}

// DeadLetterOptions configure a dead-lettering queue.
type DeadLetterOptions struct {
	// MaxDeliveries is how many times a task is delivered at most before
	// it is dead-lettered. Zero means DefaultMaxDeliveries; less than zero
	// is ErrInvalidOptions.
	MaxDeliveries int

	// VisibilityTimeout is how long a delivery keeps its task invisible to
	// other consumers. Zero means DefaultDeliveryTimeout; less than zero,
	// or more than MaxDeliveryTimeout, is ErrInvalidOptions.
	VisibilityTimeout time.Duration

	// Validate, when not nil, is called on a task before each of its
	// deliveries. An error (or a panic) means the task is malformed: it is
	// dead-lettered at once instead of being delivered. Validate must not
	// call the queue.
	Validate func(Task) error
}

// DeadLetterQueue is a queue that dead-letters by delivery count, as its
// producers, consumers and operators use it. Every method is safe for
// concurrent use, never waits for a task to appear, and returns an error
// wrapping ctx.Err() when ctx is done, having changed nothing.
type DeadLetterQueue interface {
	// Enqueue adds a task, visible at once.
	Enqueue(ctx context.Context, t Task) error

	// Receive delivers one visible task to consumer, or returns
	// ErrNoMessage.
	Receive(ctx context.Context, consumer string) (Message, error)

	// Ack acknowledges a delivery: the task leaves the queue for good.
	Ack(ctx context.Context, r Receipt) error

	// Nack reports that a delivery failed with cause: the task is visible
	// again at once, or dead-lettered if that was its last delivery.
	Nack(ctx context.Context, r Receipt, cause error) error

	// List returns the dead-letter queue, oldest dead letter first.
	List(ctx context.Context) ([]DeadLetter, error)

	// Redrive moves a dead letter back to the queue with a fresh count.
	Redrive(ctx context.Context, taskID string) error
}
