package deadlettersuite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// target is what every case is handed: a way to build the student's queue
// with any options, and the case's test and history.
type target struct {
	t     *testing.T
	h     *suites.History
	build func(task.DeadLetterOptions) (Queue, error)
}

// queue is one of the student's queues, with every call recorded in the
// case's history.
type queue struct {
	Queue
	t       *testing.T
	h       *suites.History
	opts    task.DeadLetterOptions
	holders *sync.Map // Receipt -> the consumer it was delivered to
}

// newQueue builds a queue with opts, failing the case if New refuses them.
func (e *target) newQueue(opts task.DeadLetterOptions) *queue {
	e.t.Helper()
	q, err := e.build(opts)
	if err != nil {
		e.t.Fatalf("New(%s) = %v, want a queue", describeOptions(opts), err)
	}
	e.h.Recordf("test", "New("+describeOptions(opts)+")", "a new queue")
	return &queue{Queue: q, t: e.t, h: e.h, opts: opts, holders: new(sync.Map)}
}

func describeOptions(o task.DeadLetterOptions) string {
	var parts []string
	if o.MaxDeliveries != 0 {
		parts = append(parts, fmt.Sprintf("MaxDeliveries: %d", o.MaxDeliveries))
	}
	if o.VisibilityTimeout != 0 {
		parts = append(parts, fmt.Sprintf("VisibilityTimeout: %v", o.VisibilityTimeout))
	}
	if o.Validate != nil {
		parts = append(parts, "Validate: set")
	}
	if len(parts) == 0 {
		return "Options{}"
	}
	return "Options{" + strings.Join(parts, ", ") + "}"
}

// holderOf names the consumer of a receipt the suite has seen, so the
// timeline says whose receipt an Ack or a Nack used.
func (q *queue) holderOf(r task.Receipt) string {
	if name, ok := q.holders.Load(r); ok {
		return name.(string)
	}
	return fmt.Sprintf("receipt %q", r)
}

func (q *queue) enqueue(actor string, tk task.Task) error {
	err := q.Enqueue(context.Background(), tk)
	q.h.Record(actor, fmt.Sprintf("Enqueue(%s)", tk.ID), outcome(err, "queued"))
	return err
}

// mustEnqueue enqueues tasks and fails the case if one is refused.
func (q *queue) mustEnqueue(tasks ...task.Task) {
	q.t.Helper()
	for _, tk := range tasks {
		if err := q.enqueue("producer", tk); err != nil {
			q.t.Fatalf("Enqueue(%s) = %v, want nil", tk.ID, err)
		}
	}
}

func (q *queue) receive(consumer string) (task.Message, error) {
	m, err := q.Receive(context.Background(), consumer)
	if err == nil {
		q.holders.Store(m.Receipt, fmt.Sprintf("%s's receipt of %s delivery %d", consumer, m.Task.ID, m.Deliveries))
		q.h.Recordf(consumer, "Receive()", "%s, invisible until t=%s", m, fakeclock.Elapsed()+time.Until(m.Expires))
	} else {
		q.h.Record(consumer, "Receive()", outcome(err, ""))
	}
	return m, err
}

// mustReceive receives and fails the case unless it delivers taskID as its
// delivery number deliveries.
func (q *queue) mustReceive(consumer, taskID string, deliveries int) task.Message {
	q.t.Helper()
	m, err := q.receive(consumer)
	if err != nil || m.Task.ID != taskID || m.Deliveries != deliveries {
		q.t.Fatalf("Receive() = %s, want %s", describeReceive(m, err), describeWant(taskID, deliveries))
	}
	return m
}

// mustBeEmpty fails the case unless Receive finds no visible task.
func (q *queue) mustBeEmpty(consumer, why string) {
	q.t.Helper()
	m, err := q.receive(consumer)
	if !errors.Is(err, task.ErrNoMessage) {
		q.t.Fatalf("Receive() %s = %s, want an error wrapping ErrNoMessage", why, describeReceive(m, err))
	}
}

func describeReceive(m task.Message, err error) string {
	if err != nil {
		return fmt.Sprintf("error %v", err)
	}
	return fmt.Sprintf("%s %q delivery %d", m.Task.ID, m.Consumer, m.Deliveries)
}

func describeWant(taskID string, deliveries int) string {
	return fmt.Sprintf("%s delivery %d", taskID, deliveries)
}

func (q *queue) ack(actor string, r task.Receipt) error {
	err := q.Ack(context.Background(), r)
	q.h.Record(actor, "Ack("+q.holderOf(r)+")", outcome(err, "acknowledged"))
	return err
}

func (q *queue) nack(actor string, r task.Receipt, cause error) error {
	err := q.Nack(context.Background(), r, cause)
	q.h.Record(actor, fmt.Sprintf("Nack(%s, %q)", q.holderOf(r), errText(cause)), outcome(err, "nacked"))
	return err
}

// mustNack nacks and fails the case if the queue refuses.
func (q *queue) mustNack(actor string, r task.Receipt, cause error) {
	q.t.Helper()
	if err := q.nack(actor, r, cause); err != nil {
		q.t.Fatalf("Nack(%s, %q) = %v, want nil", q.holderOf(r), errText(cause), err)
	}
}

func (q *queue) list(actor string) ([]task.DeadLetter, error) {
	dl, err := q.List(context.Background())
	if err != nil {
		q.h.Record(actor, "List()", outcome(err, ""))
	} else {
		q.h.Record(actor, "List()", describeDeadLetters(dl))
	}
	return dl, err
}

// mustList lists the dead-letter queue and fails the case on an error.
func (q *queue) mustList(actor string) []task.DeadLetter {
	q.t.Helper()
	dl, err := q.list(actor)
	if err != nil {
		q.t.Fatalf("List() = %v, want the dead letters", err)
	}
	return dl
}

func (q *queue) redrive(actor, taskID string) error {
	err := q.Redrive(context.Background(), taskID)
	q.h.Record(actor, fmt.Sprintf("Redrive(%s)", taskID), outcome(err, "back in the queue"))
	return err
}

func describeDeadLetters(dl []task.DeadLetter) string {
	if len(dl) == 0 {
		return "dead-letter queue empty"
	}
	var parts []string
	for _, d := range dl {
		parts = append(parts, d.String())
	}
	return "dead letters: " + strings.Join(parts, "; ")
}

func outcome(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// advance moves virtual time on by d and says so in the timeline.
func (q *queue) advance(d time.Duration, why string) {
	fakeclock.Advance(d)
	q.h.Note("%v later (t=%s): %s", d, fakeclock.Elapsed(), why)
}

// findDead returns the dead letter of taskID and how many there are.
func findDead(dl []task.DeadLetter, taskID string) (task.DeadLetter, int) {
	var found task.DeadLetter
	n := 0
	for _, d := range dl {
		if d.Task.ID == taskID {
			found = d
			n++
		}
	}
	return found, n
}

// mustBeDeadLettered fails the case unless the dead-letter queue holds
// taskID exactly once, with want's count, last error and reason (and its
// task unchanged: want.Task).
func (q *queue) mustBeDeadLettered(want task.DeadLetter, when string) {
	q.t.Helper()
	dl := q.mustList("operator")
	got, n := findDead(dl, want.Task.ID)
	if n != 1 {
		q.t.Fatalf("List() %s holds %s %d times, want once: %s", when, want.Task.ID, n, describeDeadLetters(dl))
	}
	if got != want {
		q.t.Fatalf("List() %s has %s, want %s%s", when, describeDeadLetter(got), describeDeadLetter(want), taskDiff(got.Task, want.Task))
	}
}

// mustNotBeDeadLettered fails the case if the dead-letter queue holds
// taskID.
func (q *queue) mustNotBeDeadLettered(taskID, when string) {
	q.t.Helper()
	dl := q.mustList("operator")
	if _, n := findDead(dl, taskID); n != 0 {
		q.t.Fatalf("List() %s = %s, want no dead letter for %s", when, describeDeadLetters(dl), taskID)
	}
}

func describeDeadLetter(d task.DeadLetter) string {
	return fmt.Sprintf("{%s deliveries %d, last error %q, reason %q}", d.Task.ID, d.Deliveries, d.LastError, d.Reason)
}

func taskDiff(got, want task.Task) string {
	if got == want {
		return ""
	}
	return fmt.Sprintf(" (task %+v, want %+v)", got, want)
}

// newTask returns a well-formed task.
func newTask(id string) task.Task {
	return task.Task{ID: id, Account: "acct-1", DocumentID: "contract-" + id, Recipient: "ann@example.com", Subject: "Please sign"}
}

// poisonTask returns a task the suite's validator calls malformed: it has
// no recipient.
func poisonTask(id string) task.Task {
	t := newTask(id)
	t.Recipient = ""
	return t
}

// errNoRecipient is what the suite's validator says about a poison task.
var errNoRecipient = errors.New("malformed task: no recipient")

// validRecipient is the suite's validator.
func validRecipient(t task.Task) error {
	if t.Recipient == "" {
		return fmt.Errorf("%s: %w", t.ID, errNoRecipient)
	}
	return nil
}

// gatedValidator is a validator that, for taskID, tells the case it has
// started and waits for the case to let it answer. Other tasks pass at
// once.
type gatedValidator struct {
	taskID  string
	started chan struct{}
	answer  chan error
	once    sync.Once
}

func newGatedValidator(taskID string) *gatedValidator {
	return &gatedValidator{taskID: taskID, started: make(chan struct{}), answer: make(chan error)}
}

func (g *gatedValidator) validate(t task.Task) error {
	if t.ID != g.taskID {
		return nil
	}
	first := false
	g.once.Do(func() { first = true })
	if !first {
		return nil
	}
	close(g.started)
	return <-g.answer
}

// gatedCause is an error whose Error method, the first time it is called,
// tells the case it has been asked and waits for the case to release it.
// Later calls, and every call after the release, answer at once.
type gatedCause struct {
	text     string
	asked    chan struct{}
	released chan struct{}
	once     sync.Once
	free     sync.Once
}

func newGatedCause(text string) *gatedCause {
	return &gatedCause{text: text, asked: make(chan struct{}), released: make(chan struct{})}
}

func (c *gatedCause) Error() string {
	c.once.Do(func() {
		close(c.asked)
		<-c.released
	})
	return c.text
}

// release lets Error answer.
func (c *gatedCause) release() { c.free.Do(func() { close(c.released) }) }
