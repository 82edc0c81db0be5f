package deadlettersuite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// The failures the suite's consumers report.
var (
	errTimeout = errors.New("provider timeout after 10s")
	errParse   = errors.New("parse document: unexpected EOF")
	errBoom    = errors.New("handler failed")
)

const vt = task.DefaultDeliveryTimeout

func checkOptions(t *testing.T, h *suites.History, e *target) {
	for _, o := range []task.DeadLetterOptions{
		{MaxDeliveries: -1},
		{VisibilityTimeout: -time.Nanosecond},
		{VisibilityTimeout: task.MaxDeliveryTimeout + time.Nanosecond},
	} {
		q, err := e.build(o)
		h.Record("test", "New("+describeOptions(o)+")", outcome(err, "a new queue"))
		if !errors.Is(err, task.ErrInvalidOptions) {
			t.Errorf("New(%s) = %v, %v, want an error wrapping ErrInvalidOptions", describeOptions(o), q, err)
		}
	}
	for _, c := range []struct {
		opts task.DeadLetterOptions
		want time.Duration
	}{
		{task.DeadLetterOptions{}, task.DefaultDeliveryTimeout},
		{task.DeadLetterOptions{VisibilityTimeout: task.MaxDeliveryTimeout}, task.MaxDeliveryTimeout},
		{task.DeadLetterOptions{VisibilityTimeout: time.Nanosecond, MaxDeliveries: 1}, time.Nanosecond},
	} {
		q := e.newQueue(c.opts)
		q.mustEnqueue(newTask("task-1"))
		m := q.mustReceive("consumer A", "task-1", 1)
		if got := time.Until(m.Expires); got != c.want {
			t.Errorf("with %s, Receive().Expires = now + %v, want now + %v", describeOptions(c.opts), got, c.want)
		}
		q.advance(c.want-time.Nanosecond, "a nanosecond before the delivery ends")
		q.mustBeEmpty("consumer B", "a nanosecond before the visibility timeout passed")
		q.advance(time.Nanosecond, "the visibility timeout has passed")
		if c.opts.MaxDeliveries == 1 {
			q.mustBeEmpty("consumer B", "after the only allowed delivery expired")
			continue
		}
		q.mustReceive("consumer B", "task-1", 2)
	}
}

// checkDefaultLimit runs the default limit on both paths: five deliveries
// that crash, and five that are nacked.
func checkDefaultLimit(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{})
	q.mustEnqueue(newTask("crashes"), newTask("fails"))
	for n := 1; n <= task.DefaultMaxDeliveries; n++ {
		q.mustNotBeDeadLettered("crashes", fmt.Sprintf("after %d crashed deliveries of the default %d", n-1, task.DefaultMaxDeliveries))
		q.mustReceive(fmt.Sprintf("consumer %d", n), "crashes", n)
		m := q.mustReceive(fmt.Sprintf("consumer %d", n), "fails", n)
		q.mustNack(fmt.Sprintf("consumer %d", n), m.Receipt, errTimeout)
		if n < task.DefaultMaxDeliveries {
			q.mustNotBeDeadLettered("fails", fmt.Sprintf("after %d nacked deliveries of the default %d", n, task.DefaultMaxDeliveries))
		}
		h.Note("consumer %d crashes while working on crashes", n)
		q.advance(vt, "the crashed delivery's visibility timeout has passed")
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("crashes"), Deliveries: 5, Reason: task.ReasonMaxDeliveries}, "after 5 crashed deliveries with MaxDeliveries 0 (the default, 5)")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("fails"), Deliveries: 5, LastError: errTimeout.Error(), Reason: task.ReasonMaxDeliveries}, "after 5 nacked deliveries with MaxDeliveries 0 (the default, 5)")
	q.mustBeEmpty("consumer 6", "after both tasks used their 5 deliveries")
}

func checkEnqueue(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	if err := q.enqueue("producer", task.Task{Subject: "no id"}); !errors.Is(err, task.ErrNoTaskID) {
		t.Errorf("Enqueue(a task with no ID) = %v, want an error wrapping ErrNoTaskID", err)
	}
	q.mustBeEmpty("consumer A", "after the only Enqueue was refused")

	// The task comes back exactly as it went in: empty fields, multi-byte
	// text and all.
	multi := task.Task{ID: "tâche-ü-契約", Account: "compte-é", DocumentID: "doc/ß", Recipient: "zoë@example.com", Subject: "Vertrag für Zoë ✍️ — 契約書"}
	bare := task.Task{ID: "bare"}
	q.mustEnqueue(multi, bare)
	if err := q.enqueue("producer", task.Task{ID: multi.ID, Subject: "a second copy"}); !errors.Is(err, task.ErrDuplicateMessage) {
		t.Errorf("Enqueue(%s) while %s is queued = %v, want an error wrapping ErrDuplicateMessage", multi.ID, multi.ID, err)
	}
	m := q.mustReceive("consumer A", multi.ID, 1)
	if m.Task != multi {
		t.Errorf("Receive().Task = %+v, want the task as enqueued, %+v", m.Task, multi)
	}
	if err := q.enqueue("producer", multi); !errors.Is(err, task.ErrDuplicateMessage) {
		t.Errorf("Enqueue(%s) while it is being delivered = %v, want an error wrapping ErrDuplicateMessage", multi.ID, err)
	}
	mb := q.mustReceive("consumer B", bare.ID, 1)
	if mb.Task != bare {
		t.Errorf("Receive().Task = %+v, want the task as enqueued, %+v", mb.Task, bare)
	}
	if err := q.ack("consumer B", mb.Receipt); err != nil {
		t.Fatalf("Ack(%s) = %v, want nil", q.holderOf(mb.Receipt), err)
	}
	if err := q.enqueue("producer", bare); err != nil {
		t.Errorf("Enqueue(%s) after it was acknowledged = %v, want nil: an acknowledged task has left the queue", bare.ID, err)
	}
	q.mustReceive("consumer B", bare.ID, 1)

	q.mustNack("consumer A", m.Receipt, errParse)
	q.mustBeDeadLettered(task.DeadLetter{Task: multi, Deliveries: 1, LastError: errParse.Error(), Reason: task.ReasonMaxDeliveries}, "after its only delivery failed")
	if err := q.enqueue("producer", multi); !errors.Is(err, task.ErrDuplicateMessage) {
		t.Errorf("Enqueue(%s) while it is in the dead-letter queue = %v, want an error wrapping ErrDuplicateMessage (redrive it instead)", multi.ID, err)
	}
	q.mustBeEmpty("consumer C", "after a duplicate of a dead letter was refused")

	// Only the empty ID is refused: an ID of white space is an ID.
	blank := task.Task{ID: " ", Subject: "an ID of one space"}
	if err := q.enqueue("producer", blank); err != nil {
		t.Errorf("Enqueue(a task whose ID is %q) = %v, want nil: only the empty ID is refused, and %q is not empty", blank.ID, err, blank.ID)
	} else if mb := q.mustReceive("consumer C", blank.ID, 1); mb.Task != blank {
		t.Errorf("Receive().Task = %+v, want the task as enqueued, %+v", mb.Task, blank)
	}
}

func checkVisibility(t *testing.T, h *suites.History, e *target) {
	const timeout = 45 * time.Second
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 10, VisibilityTimeout: timeout})
	q.mustEnqueue(newTask("task-1"), newTask("task-2"), newTask("task-3"))
	receipts := map[task.Receipt]bool{}
	for i, c := range []string{"consumer A", "consumer B", "consumer C"} {
		id := fmt.Sprintf("task-%d", i+1)
		m := q.mustReceive(c, id, 1)
		if m.Consumer != c {
			t.Errorf("Receive(%q).Consumer = %q, want %q", c, m.Consumer, c)
		}
		if got := time.Until(m.Expires); got != timeout {
			t.Errorf("Receive(%q).Expires = now + %v, want now + %v (the visibility timeout)", c, got, timeout)
		}
		if m.Receipt == "" || receipts[m.Receipt] {
			t.Errorf("Receive(%q).Receipt = %q, want a receipt no other delivery had", c, m.Receipt)
		}
		receipts[m.Receipt] = true
	}
	q.mustBeEmpty("consumer D", "while every task is being delivered")
	q.advance(timeout-time.Nanosecond, "a nanosecond before the deliveries end")
	q.mustBeEmpty("consumer D", "a nanosecond before the visibility timeout passed")
	q.advance(time.Nanosecond, "the deliveries' visibility timeout has passed; nobody acknowledged")
	for i := range 3 {
		m := q.mustReceive("consumer D", fmt.Sprintf("task-%d", i+1), 2)
		if receipts[m.Receipt] {
			t.Errorf("Receive() of a redelivery returned the receipt %q of an earlier delivery, want a new one", m.Receipt)
		}
		receipts[m.Receipt] = true
	}
	q.advance(72*time.Hour, "three days pass; nobody acknowledged")
	m := q.mustReceive("consumer E", "task-1", 3)
	q.mustNack("consumer E", m.Receipt, errTimeout)
	h.Note("task-1 was nacked: visible again at once, and still the task enqueued earliest")
	q.mustReceive("consumer F", "task-1", 4)
}

// checkCountOnDelivery follows one task through deliveries that end every
// way but an acknowledgement: each delivery's count is one more than the
// last, however the last one ended.
func checkCountOnDelivery(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 10})
	q.mustEnqueue(newTask("task-1"))
	m1 := q.mustReceive("consumer A", "task-1", 1)
	q.mustNack("consumer A", m1.Receipt, errTimeout)
	m2 := q.mustReceive("consumer B", "task-1", 2)
	h.Note("consumer B crashes: it never acknowledges or nacks")
	q.advance(vt, "consumer B's delivery has expired")
	q.mustReceive("consumer C", "task-1", 3)
	if err := q.nack("consumer B", m2.Receipt, errTimeout); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Nack(%s) after that delivery expired = %v, want an error wrapping ErrDeliveryLost", q.holderOf(m2.Receipt), err)
	}
	q.advance(vt, "consumer C's delivery has expired")
	m4 := q.mustReceive("consumer D", "task-1", 4)
	q.mustNack("consumer D", m4.Receipt, errParse)
	q.mustReceive("consumer E", "task-1", 5)
}

func checkCrashedConsumer(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3})
	poison := newTask("task-1")
	poison.Subject = "a document that crashes the parser"
	q.mustEnqueue(poison)
	for n := 1; n <= 3; n++ {
		c := fmt.Sprintf("consumer %d", n)
		m, err := q.receive(c)
		if err != nil || m.Task.ID != "task-1" {
			t.Fatalf("Receive() = %s, want task-1 delivery %d", describeReceive(m, err), n)
		}
		if m.Deliveries != n {
			t.Errorf("Receive() = %s, want task-1 delivery %d: the crashed deliveries before it were not counted", describeReceive(m, err), n)
		}
		h.Note("%s crashes while parsing task-1: no Ack, no Nack", c)
		q.advance(vt, "the crashed delivery's visibility timeout has passed")
	}
	// A queue that did not count the crashes keeps delivering: show how
	// long the loop goes on.
	const shown = 10
	extra := 0
	for ; extra < shown; extra++ {
		c := fmt.Sprintf("consumer %d", 4+extra)
		if _, err := q.receive(c); err != nil {
			break
		}
		h.Note("%s crashes too", c)
		q.advance(vt, "the crashed delivery's visibility timeout has passed")
	}
	if extra > 0 {
		t.Fatalf("after three crashed deliveries with MaxDeliveries 3, Receive() delivered task-1 %d more times in the next %v, want an error wrapping ErrNoMessage: the poison task loops, crashing a consumer every %v, and is never dead-lettered", extra, time.Duration(extra)*vt, vt)
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: poison, Deliveries: 3, Reason: task.ReasonMaxDeliveries}, "after three deliveries whose consumers all crashed")
	q.advance(7*24*time.Hour, "a week passes")
	q.mustBeEmpty("consumer 4", "a week after the task was dead-lettered")
	q.mustBeDeadLettered(task.DeadLetter{Task: poison, Deliveries: 3, Reason: task.ReasonMaxDeliveries}, "a week later")
}

func checkExactLimit(t *testing.T, h *suites.History, e *target) {
	h.Note("part 1: MaxDeliveries 3, every delivery nacked")
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3})
	q.mustEnqueue(newTask("nacked"))
	for n := 1; n <= 2; n++ {
		m := q.mustReceive("consumer A", "nacked", n)
		q.mustNack("consumer A", m.Receipt, fmt.Errorf("attempt %d: %w", n, errTimeout))
	}
	q.mustNotBeDeadLettered("nacked", "after 2 of its 3 deliveries failed")
	m := q.mustReceive("consumer A", "nacked", 3)
	q.mustNack("consumer A", m.Receipt, fmt.Errorf("attempt 3: %w", errTimeout))
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("nacked"), Deliveries: 3, LastError: "attempt 3: " + errTimeout.Error(), Reason: task.ReasonMaxDeliveries}, "at the instant its third and last delivery was nacked")
	q.mustBeEmpty("consumer B", "after the third and last delivery failed")

	h.Note("part 2: MaxDeliveries 2, the last delivery's consumer crashes")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 2})
	q.mustEnqueue(newTask("crashed"))
	m = q.mustReceive("consumer A", "crashed", 1)
	q.mustNack("consumer A", m.Receipt, errParse)
	q.mustReceive("consumer B", "crashed", 2)
	h.Note("consumer B crashes")
	q.advance(vt-time.Nanosecond, "a nanosecond before the last delivery ends")
	q.mustNotBeDeadLettered("crashed", "a nanosecond before its last delivery's visibility timeout passed")
	q.mustBeEmpty("consumer C", "while the last delivery still holds the task")
	q.advance(time.Nanosecond, "the last delivery's visibility timeout has passed")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("crashed"), Deliveries: 2, LastError: errParse.Error(), Reason: task.ReasonMaxDeliveries}, "at the instant its last delivery expired")
	q.mustBeEmpty("consumer C", "after the last delivery expired")

	h.Note("part 3: MaxDeliveries 1")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	q.mustEnqueue(newTask("once"))
	q.mustReceive("consumer A", "once", 1)
	q.advance(vt, "the only delivery's visibility timeout has passed")
	q.mustBeEmpty("consumer B", "after the only allowed delivery expired")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("once"), Deliveries: 1, Reason: task.ReasonMaxDeliveries}, "after its only delivery expired")
}

func checkDeadLetterRecord(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3})
	multi := task.Task{ID: "tâche-7", Account: "compte-é", DocumentID: "contrat-ß", Recipient: "zoë@example.com", Subject: "Vertrag für Zoë ✍️ — 契約書"}
	bare := task.Task{ID: "bare"}
	q.mustEnqueue(multi)
	causes := []error{
		fmt.Errorf("sign %s: %w", multi.ID, errTimeout),
		errors.New("provider said: 503 Service Unavailable"),
		fmt.Errorf("render «%s»: %w", multi.Subject, errParse),
	}
	for i, cause := range causes {
		m := q.mustReceive("consumer A", multi.ID, i+1)
		q.mustNack("consumer A", m.Receipt, cause)
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: multi, Deliveries: 3, LastError: causes[2].Error(), Reason: task.ReasonMaxDeliveries}, "after three failed deliveries")

	h.Note("a task with nothing but an ID: one failed delivery, then two crashes")
	q.mustEnqueue(bare)
	m := q.mustReceive("consumer B", bare.ID, 1)
	q.mustNack("consumer B", m.Receipt, errBoom)
	for n := 2; n <= 3; n++ {
		q.mustReceive("consumer C", bare.ID, n)
		h.Note("consumer C crashes")
		q.advance(vt, "the crashed delivery's visibility timeout has passed")
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: bare, Deliveries: 3, LastError: errBoom.Error(), Reason: task.ReasonMaxDeliveries}, "after one failed and two crashed deliveries (the last error recorded is the failure's)")
}

func checkMalformed(t *testing.T, h *suites.History, e *target) {
	var mu sync.Mutex
	validated := map[string]int{}
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3, Validate: func(tk task.Task) error {
		mu.Lock()
		validated[tk.ID]++
		mu.Unlock()
		return validRecipient(tk)
	}})
	q.mustEnqueue(poisonTask("poison-1"), newTask("good"), poisonTask("poison-2"))
	q.mustReceive("consumer A", "good", 1)
	mu.Lock()
	if n := validated["poison-2"]; n > 0 {
		t.Errorf("a Receive that delivered good called Validate on poison-2 (calls: %d), want no call: a Receive validates the task it is about to deliver, and poison-2 was behind good", n)
	}
	mu.Unlock()
	q.mustBeDeadLettered(task.DeadLetter{Task: poisonTask("poison-1"), LastError: validRecipient(poisonTask("poison-1")).Error(), Reason: task.ReasonMalformed}, "after a Receive found poison-1 malformed")
	q.mustBeEmpty("consumer B", "when the only task left is malformed")
	q.mustBeDeadLettered(task.DeadLetter{Task: poisonTask("poison-2"), LastError: validRecipient(poisonTask("poison-2")).Error(), Reason: task.ReasonMalformed}, "after a Receive found poison-2 malformed")
	mu.Lock()
	if validated["good"] == 0 || validated["poison-1"] == 0 || validated["poison-2"] == 0 {
		t.Errorf("Validate was called %v times per task, want at least once for each of good, poison-1 and poison-2 (before its delivery)", validated)
	}
	mu.Unlock()

	h.Note("a validator that panics on a task")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3, Validate: func(tk task.Task) error {
		if tk.ID == "panics" {
			panic("index out of range [3] with length 3")
		}
		return nil
	}})
	q.mustEnqueue(newTask("panics"), newTask("good"))
	var m task.Message
	var err error
	if !suites.Guard(t, func() { m, err = q.receive("consumer A") }) {
		t.Fatalf("Receive() panicked when the validator panicked on a task, want the task dead-lettered as malformed and the next task delivered")
	}
	if err != nil || m.Task.ID != "good" || m.Deliveries != 1 {
		t.Errorf("Receive() past a task whose validator panics = %s, want good delivery 1", describeReceive(m, err))
	}
	dl := q.mustList("operator")
	d, n := findDead(dl, "panics")
	if n != 1 || d.Reason != task.ReasonMalformed || d.Deliveries != 0 || !strings.Contains(d.LastError, "index out of range [3] with length 3") {
		t.Errorf("List() after the validator panicked on a task = %s, want panics dead-lettered once as malformed, 0 deliveries, its last error naming the panic", describeDeadLetters(dl))
	}

	h.Note("a validator that starts rejecting a task after its first delivery (a new consumer version)")
	var calls atomic.Int32
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 5, Validate: func(tk task.Task) error {
		if calls.Add(1) > 1 {
			return errNoRecipient
		}
		return nil
	}})
	q.mustEnqueue(newTask("task-1"))
	m = q.mustReceive("consumer A", "task-1", 1)
	q.mustNack("consumer A", m.Receipt, errTimeout)
	q.mustBeEmpty("consumer B", "once the validator rejects the task")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-1"), Deliveries: 1, LastError: errNoRecipient.Error(), Reason: task.ReasonMalformed}, "after the validator rejected its second delivery")

	h.Note("no validator: every task is well-formed")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3})
	q.mustEnqueue(poisonTask("no-recipient"))
	q.mustReceive("consumer A", "no-recipient", 1)
}

func checkReceipts(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 5})
	for _, r := range []task.Receipt{"", "not-a-receipt"} {
		if err := q.ack("consumer X", r); !errors.Is(err, task.ErrDeliveryLost) {
			t.Errorf("Ack(%q) on a queue that never delivered it = %v, want an error wrapping ErrDeliveryLost", r, err)
		}
		if err := q.nack("consumer X", r, errBoom); !errors.Is(err, task.ErrDeliveryLost) {
			t.Errorf("Nack(%q) on a queue that never delivered it = %v, want an error wrapping ErrDeliveryLost", r, err)
		}
	}

	h.Note("an acknowledgement a nanosecond before the delivery ends")
	q.mustEnqueue(newTask("acked"))
	m := q.mustReceive("consumer A", "acked", 1)
	q.advance(vt-time.Nanosecond, "a nanosecond before the delivery ends")
	if err := q.ack("consumer A", m.Receipt); err != nil {
		t.Fatalf("Ack(%s) a nanosecond before it expired = %v, want nil", q.holderOf(m.Receipt), err)
	}
	q.advance(72*time.Hour, "three days pass")
	q.mustBeEmpty("consumer B", "three days after the only task was acknowledged")
	q.mustNotBeDeadLettered("acked", "three days after it was acknowledged")
	if err := q.ack("consumer A", m.Receipt); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Ack(%s) a second time = %v, want an error wrapping ErrDeliveryLost", q.holderOf(m.Receipt), err)
	}
	if err := q.nack("consumer A", m.Receipt, errBoom); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Nack(%s) after it was acknowledged = %v, want an error wrapping ErrDeliveryLost", q.holderOf(m.Receipt), err)
	}
	q.mustBeEmpty("consumer B", "after late calls with an acknowledged task's receipt")

	h.Note("receipts of deliveries that ended")
	q.mustEnqueue(newTask("task-2"))
	mA := q.mustReceive("consumer A", "task-2", 1)
	q.advance(vt, "consumer A's delivery has expired, exactly now; nobody has received the task since")
	if err := q.ack("consumer A", mA.Receipt); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Ack(%s) at the instant it expired = %v, want an error wrapping ErrDeliveryLost", q.holderOf(mA.Receipt), err)
	}
	if err := q.nack("consumer A", mA.Receipt, errBoom); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Nack(%s) at the instant it expired = %v, want an error wrapping ErrDeliveryLost", q.holderOf(mA.Receipt), err)
	}
	mB := q.mustReceive("consumer B", "task-2", 2)
	q.mustNack("consumer B", mB.Receipt, errTimeout)
	mC := q.mustReceive("consumer C", "task-2", 3)
	for _, old := range []task.Receipt{mA.Receipt, mB.Receipt} {
		if err := q.nack("zombie", old, errors.New("stale failure")); !errors.Is(err, task.ErrDeliveryLost) {
			t.Errorf("Nack(%s) while %s holds the task = %v, want an error wrapping ErrDeliveryLost", q.holderOf(old), q.holderOf(mC.Receipt), err)
		}
		if err := q.ack("zombie", old); !errors.Is(err, task.ErrDeliveryLost) {
			t.Errorf("Ack(%s) while %s holds the task = %v, want an error wrapping ErrDeliveryLost", q.holderOf(old), q.holderOf(mC.Receipt), err)
		}
	}
	q.mustBeEmpty("consumer D", "while consumer C holds the task (stale receipts changed nothing)")
	if err := q.nack("consumer C", mC.Receipt, nil); !errors.Is(err, task.ErrNoCause) {
		t.Errorf("Nack(%s, nil) = %v, want an error wrapping ErrNoCause", q.holderOf(mC.Receipt), err)
	}
	q.mustBeEmpty("consumer D", "after a Nack without a cause was refused")
	if err := q.ack("consumer C", mC.Receipt); err != nil {
		t.Errorf("Ack(%s) after stale receipts and a refused Nack = %v, want nil: the delivery is still current", q.holderOf(mC.Receipt), err)
	}

	h.Note("a stale Nack records no error")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 2})
	q.mustEnqueue(newTask("task-3"))
	m1 := q.mustReceive("consumer A", "task-3", 1)
	q.mustNack("consumer A", m1.Receipt, errTimeout)
	m2 := q.mustReceive("consumer B", "task-3", 2)
	if err := q.nack("consumer A", m1.Receipt, errors.New("stale failure")); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Nack(%s) a second time, while %s holds the task = %v, want an error wrapping ErrDeliveryLost", q.holderOf(m1.Receipt), q.holderOf(m2.Receipt), err)
	}
	q.mustBeEmpty("consumer C", "while consumer B holds the task")
	h.Note("consumer B crashes")
	q.advance(vt, "consumer B's delivery has expired")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-3"), Deliveries: 2, LastError: errTimeout.Error(), Reason: task.ReasonMaxDeliveries}, "after a failed delivery, a refused stale Nack and a crash")

	h.Note("the receipt of a dead-lettered task's last delivery")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	q.mustEnqueue(newTask("task-4"))
	last := q.mustReceive("consumer A", "task-4", 1)
	q.mustNack("consumer A", last.Receipt, errParse)
	if err := q.ack("consumer A", last.Receipt); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Ack(%s) after its Nack dead-lettered the task = %v, want an error wrapping ErrDeliveryLost", q.holderOf(last.Receipt), err)
	}
	if err := q.nack("consumer A", last.Receipt, errBoom); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Nack(%s) after its Nack dead-lettered the task = %v, want an error wrapping ErrDeliveryLost", q.holderOf(last.Receipt), err)
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-4"), Deliveries: 1, LastError: errParse.Error(), Reason: task.ReasonMaxDeliveries}, "after late calls with its last delivery's receipt")
	if err := q.redrive("operator", "task-4"); err != nil {
		t.Fatalf("Redrive(task-4) = %v, want nil", err)
	}
	fresh := q.mustReceive("consumer B", "task-4", 1)
	if err := q.ack("consumer A", last.Receipt); !errors.Is(err, task.ErrDeliveryLost) {
		t.Errorf("Ack(%s) after the task was redriven and delivered again = %v, want an error wrapping ErrDeliveryLost", q.holderOf(last.Receipt), err)
	}
	if err := q.ack("consumer B", fresh.Receipt); err != nil {
		t.Errorf("Ack(%s) = %v, want nil: a stale receipt must not have touched the new delivery", q.holderOf(fresh.Receipt), err)
	}
}

func checkListOrder(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1, Validate: validRecipient})
	if dl := q.mustList("operator"); len(dl) != 0 {
		t.Errorf("List() on a new queue = %s, want it empty", describeDeadLetters(dl))
	}
	q.mustEnqueue(newTask("expires"), poisonTask("malformed"), newTask("nacked"))
	q.mustReceive("consumer A", "expires", 1)
	q.advance(time.Second, "")
	m := q.mustReceive("consumer B", "nacked", 1)
	q.advance(time.Second, "")
	q.mustNack("consumer B", m.Receipt, errTimeout)
	q.advance(vt, "consumer A's delivery of expires has expired")
	want := []string{"malformed", "nacked", "expires"}
	check := func(when string) {
		t.Helper()
		dl := q.mustList("operator")
		var got []string
		for _, d := range dl {
			got = append(got, d.Task.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("List() %s = %v, want %v (oldest dead letter first)", when, got, want)
		}
	}
	check("after three dead-letterings")

	h.Note("two last deliveries that expired a second apart, the later-enqueued task's first, settled by one List")
	q2 := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 2})
	q2.mustEnqueue(newTask("a"), newTask("b"))
	ma := q2.mustReceive("consumer A", "a", 1)
	mb := q2.mustReceive("consumer B", "b", 1)
	q2.mustNack("consumer B", mb.Receipt, errTimeout)
	q2.mustReceive("consumer B", "b", 2)
	q2.advance(time.Second, "")
	q2.mustNack("consumer A", ma.Receipt, errTimeout)
	q2.mustReceive("consumer A", "a", 2)
	q2.advance(time.Hour, "both last deliveries have expired, b's a second before a's, and nobody looked")
	var order []string
	for _, d := range q2.mustList("operator") {
		order = append(order, d.Task.ID)
	}
	if fmt.Sprint(order) != "[b a]" {
		t.Errorf("List() of two tasks whose last deliveries expired a second apart, b's first = %v, want [b a] (the order they were dead-lettered in)", order)
	}
	dl := q.mustList("operator")
	dl[0].Task.ID = "changed by the caller"
	dl[1].LastError = "changed by the caller"
	check("after the caller changed the slice an earlier List returned")
	if d, _ := findDead(q.mustList("operator"), "nacked"); d.LastError != errTimeout.Error() {
		t.Errorf("List() after the caller changed an earlier List's slice has nacked's last error %q, want %q", d.LastError, errTimeout.Error())
	}
	q.advance(400*24*time.Hour, "400 days pass")
	check("400 days later")
}

func checkRedrive(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 2})
	q.mustEnqueue(newTask("task-1"))
	for n := 1; n <= 2; n++ {
		m := q.mustReceive("consumer A", "task-1", n)
		q.mustNack("consumer A", m.Receipt, errTimeout)
	}
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-1"), Deliveries: 2, LastError: errTimeout.Error(), Reason: task.ReasonMaxDeliveries}, "after its two deliveries failed")
	for _, id := range []string{"unknown", "task-2"} {
		if id == "task-2" {
			q.mustEnqueue(newTask("task-2"))
		}
		if err := q.redrive("operator", id); !errors.Is(err, task.ErrNotDeadLettered) {
			t.Errorf("Redrive(%q) of a task not in the dead-letter queue = %v, want an error wrapping ErrNotDeadLettered", id, err)
		}
	}
	h.Note("the operator fixes the cause and redrives task-1")
	if err := q.redrive("operator", "task-1"); err != nil {
		t.Fatalf("Redrive(task-1) = %v, want nil", err)
	}
	if err := q.redrive("operator", "task-1"); !errors.Is(err, task.ErrNotDeadLettered) {
		t.Errorf("Redrive(task-1) a second time = %v, want an error wrapping ErrNotDeadLettered", err)
	}
	q.mustNotBeDeadLettered("task-1", "after it was redriven")
	m2 := q.mustReceive("consumer B", "task-2", 1)
	if err := q.ack("consumer B", m2.Receipt); err != nil {
		t.Fatalf("Ack(%s) = %v, want nil", q.holderOf(m2.Receipt), err)
	}
	q.mustReceive("consumer B", "task-1", 1)
	h.Note("consumer B crashes")
	q.advance(vt, "consumer B's delivery of task-1 has expired")
	q.mustNotBeDeadLettered("task-1", "after 1 of its 2 fresh deliveries")
	q.mustReceive("consumer C", "task-1", 2)
	h.Note("consumer C crashes")
	q.advance(vt, "consumer C's delivery of task-1 has expired")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-1"), Deliveries: 2, Reason: task.ReasonMaxDeliveries}, "after both fresh deliveries crashed (the failure from before the redrive is forgotten)")

	h.Note("a malformed task redriven without a fix is validated again")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 2, Validate: validRecipient})
	q.mustEnqueue(poisonTask("poison"))
	q.mustBeEmpty("consumer A", "when the only task is malformed")
	if err := q.redrive("operator", "poison"); err != nil {
		t.Fatalf("Redrive(poison) = %v, want nil", err)
	}
	q.mustBeEmpty("consumer A", "after a malformed task was redriven unchanged")
	q.mustBeDeadLettered(task.DeadLetter{Task: poisonTask("poison"), LastError: validRecipient(poisonTask("poison")).Error(), Reason: task.ReasonMalformed}, "after it was redriven and validated again")
}

// checkNoGapWhileValidating holds the validator still while a producer
// enqueues the same task: whatever the queue does while it validates, the
// task is in one of the two queues, so the duplicate is refused.
func checkNoGapWhileValidating(t *testing.T, h *suites.History, e *target) {
	for _, malformed := range []bool{true, false} {
		gate := newGatedValidator("task-1")
		q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3, Validate: gate.validate})
		q.mustEnqueue(newTask("task-1"))
		var m task.Message
		var recvErr error
		recv := suites.Go(func() { m, recvErr = q.receive("consumer A") })
		select {
		case <-gate.started:
		case <-recv.Done():
			t.Fatalf("Receive() = %s without validating task-1, want the validator called before its delivery", describeReceive(m, recvErr))
		}
		h.Note("the validator is looking at task-1")
		var enqErr error
		enq := suites.Go(func() { enqErr = q.enqueue("producer", newTask("task-1")) })
		enq.Settle() // answered at once, or waiting for the Receive: either is fine
		var answer error
		if malformed {
			answer = errNoRecipient
		}
		h.Note("the validator answers %v", errText(answer))
		gate.answer <- answer
		recv.Wait()
		enq.Wait()
		if enqErr == nil {
			t.Fatalf("Enqueue(task-1) while the validator looked at task-1 = nil, want it refused as a duplicate: the task was in neither queue")
		}
		if !errors.Is(enqErr, task.ErrDuplicateMessage) {
			t.Errorf("Enqueue(task-1) while the validator looked at task-1 = %v, want an error wrapping ErrDuplicateMessage", enqErr)
		}
		if malformed {
			if !errors.Is(recvErr, task.ErrNoMessage) {
				t.Errorf("Receive() of a malformed task = %s, want an error wrapping ErrNoMessage", describeReceive(m, recvErr))
			}
			q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-1"), LastError: errNoRecipient.Error(), Reason: task.ReasonMalformed}, "after the validator rejected it")
		} else {
			if recvErr != nil || m.Task.ID != "task-1" || m.Deliveries != 1 {
				t.Errorf("Receive() = %s, want task-1 delivery 1", describeReceive(m, recvErr))
			}
			q.mustNotBeDeadLettered("task-1", "after the validator accepted it")
			q.mustBeEmpty("consumer B", "while consumer A holds the only task")
		}
	}
}

// checkMoveIsAtomic nacks a task's last delivery with a cause whose
// Error method the case holds still: the queue reads the cause's text
// somewhere in the middle of the move. While it waits, a producer enqueues
// the same task and an operator redrives it. Whatever step of the move the
// queue is at, the task is in one of the two queues: the duplicate is
// refused, and the redrive either finds nothing yet or finds the task
// parked and brings it back once.
func checkMoveIsAtomic(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	q.mustEnqueue(newTask("task-1"))
	m := q.mustReceive("consumer A", "task-1", 1)
	cause := newGatedCause("parse document: unexpected EOF")
	var nackErr error
	nack := suites.Go(func() { nackErr = q.Nack(context.Background(), m.Receipt, cause) })
	select {
	case <-cause.asked:
		h.Record("consumer A", "Nack(consumer A's receipt of task-1 delivery 1, cause)", "the queue asks the cause for its text, and the case holds the answer")
	case <-nack.Done():
		h.Record("consumer A", "Nack(consumer A's receipt of task-1 delivery 1, cause)", outcome(nackErr, "returned without asking the cause for its text"))
	}
	var enqErr, redriveErr error
	enq := suites.Go(func() { enqErr = q.enqueue("producer", newTask("task-1")) })
	enq.Settle()
	redrive := suites.Go(func() { redriveErr = q.redrive("operator", "task-1") })
	redriveReturned := redrive.Settle()
	h.Note("the cause answers")
	cause.release()
	nack.Wait()
	enq.Wait()
	redrive.Wait()
	if nackErr != nil {
		t.Fatalf("Nack(consumer A's receipt of task-1 delivery 1) = %v, want nil", nackErr)
	}
	if enqErr == nil {
		t.Fatalf("Enqueue(task-1) during the Nack that dead-letters it = nil, want it refused as a duplicate: the task was in neither queue")
	}
	if !errors.Is(enqErr, task.ErrDuplicateMessage) {
		t.Errorf("Enqueue(task-1) during the Nack that dead-letters it = %v, want an error wrapping ErrDuplicateMessage", enqErr)
	}
	switch {
	case redriveErr == nil:
		h.Note("the redrive found task-1 parked (returned at once: %v)", redriveReturned)
		q.mustNotBeDeadLettered("task-1", "after it was redriven")
		got := q.mustReceive("consumer B", "task-1", 1)
		q.mustBeEmpty("consumer C", "while consumer B holds the redriven task")
		if err := q.ack("consumer B", got.Receipt); err != nil {
			t.Errorf("Ack(%s) = %v, want nil", q.holderOf(got.Receipt), err)
		}
		q.mustBeEmpty("consumer C", "after the redriven task was acknowledged: one copy, not two")
	case errors.Is(redriveErr, task.ErrNotDeadLettered):
		q.mustBeDeadLettered(task.DeadLetter{Task: newTask("task-1"), Deliveries: 1, LastError: cause.text, Reason: task.ReasonMaxDeliveries}, "after the Nack of its last delivery")
		q.mustBeEmpty("consumer B", "after its last delivery was nacked")
	default:
		t.Errorf("Redrive(task-1) during the Nack that dead-letters it = %v, want nil or an error wrapping ErrNotDeadLettered", redriveErr)
	}
}

// checkConcurrentWorkload runs consumers, acknowledgements, nacks and
// redrives all at once: good tasks are acknowledged, poison tasks nacked
// until they are dead-lettered, then redriven once by an operator who
// watches List, and nacked until they are dead-lettered again. No task may
// be held by two consumers at once, every delivery's count is one more
// than the last (or 1 after a redrive), and in the end every good task was
// acknowledged once and every poison task is in the dead-letter queue once.
func checkConcurrentWorkload(t *testing.T, h *suites.History, e *target) {
	const (
		consumers = 4
		good      = 12
		poison    = 4
		max       = 2
		maxIdle   = 20000
	)
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: max})
	for i := range good {
		q.mustEnqueue(newTask(fmt.Sprintf("good-%d", i)))
	}
	for i := range poison {
		q.mustEnqueue(newTask(fmt.Sprintf("poison-%d", i)))
	}
	var (
		mu       sync.Mutex
		held     = map[string]string{} // task id -> consumer holding it
		last     = map[string]int{}    // task id -> its last delivery count seen
		acked    = map[string]int{}
		redriven = map[string]bool{}
		problems []string
		stop     atomic.Bool
		wg       sync.WaitGroup
		ctx      = context.Background()
	)
	// complain records a problem and stops everyone; mu is held.
	complain := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
		stop.Store(true)
	}
	// took checks and records a delivery; mu is held.
	took := func(name string, m task.Message) {
		id := m.Task.ID
		q.h.Recordf(name, "Receive()", "%s", m)
		if other, ok := held[id]; ok {
			complain("%s received %s while %s still held it", name, id, other)
		}
		if m.Deliveries != last[id]+1 {
			complain("%s received %s as delivery %d, want %d", name, id, m.Deliveries, last[id]+1)
		}
		if acked[id] > 0 {
			complain("%s received %s after it was acknowledged", name, id)
		}
		held[id] = name
		last[id] = m.Deliveries
	}
	for c := range consumers {
		name := fmt.Sprintf("consumer %c", 'A'+c)
		wg.Go(func() {
			for idle := 0; !stop.Load(); {
				m, err := q.Receive(ctx, name)
				mu.Lock()
				switch {
				case errors.Is(err, task.ErrNoMessage):
					done := len(acked) == good && len(redriven) == poison
					if idle++; !done && idle > maxIdle {
						complain("%s found no visible task %d times in a row while %d of %d good tasks were acknowledged and %d of %d poison tasks redriven: the queue lost a task", name, maxIdle, len(acked), good, len(redriven), poison)
					}
					mu.Unlock()
					if done || idle > maxIdle {
						return
					}
					runtime.Gosched()
					continue
				case err != nil:
					complain("%s Receive() = %v, want a task or ErrNoMessage", name, err)
					mu.Unlock()
					return
				}
				idle = 0
				took(name, m)
				delete(held, m.Task.ID) // before the call: once it returns, another consumer may take the task
				mu.Unlock()
				isGood := strings.HasPrefix(m.Task.ID, "good")
				if isGood {
					err = q.ack(name, m.Receipt)
				} else {
					err = q.nack(name, m.Receipt, errBoom)
				}
				mu.Lock()
				if err != nil {
					complain("%s's Ack or Nack of %s delivery %d = %v, want nil", name, m.Task.ID, m.Deliveries, err)
				} else if isGood {
					acked[m.Task.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for idle := 0; !stop.Load(); idle++ {
			dl, err := q.List(ctx)
			mu.Lock()
			switch {
			case err != nil:
				complain("List() = %v, want the dead letters", err)
			case len(redriven) == poison:
			case idle > maxIdle:
				complain("the operator waited in vain for every poison task to reach the dead-letter queue: %d of %d redriven", len(redriven), poison)
			default:
				mu.Unlock()
				for _, d := range dl {
					mu.Lock()
					again := redriven[d.Task.ID]
					if !again {
						if d.Deliveries != max {
							complain("List() has %s after %d deliveries, want %d", d.Task.ID, d.Deliveries, max)
						}
						last[d.Task.ID] = 0 // the redrive starts the count again
						redriven[d.Task.ID] = true
					}
					mu.Unlock()
					if again {
						continue
					}
					if err := q.redrive("operator", d.Task.ID); err != nil {
						mu.Lock()
						complain("Redrive(%s) of a task List() just showed = %v, want nil", d.Task.ID, err)
						mu.Unlock()
						return
					}
				}
				runtime.Gosched()
				continue
			}
			mu.Unlock()
			return
		}
	})
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		return
	}
	h.Note("every good task acknowledged and every poison task redriven; the test drains what is left")
	for range poison*max + 1 {
		m, err := q.Receive(ctx, "consumer Z")
		if errors.Is(err, task.ErrNoMessage) {
			q.h.Record("consumer Z", "Receive()", outcome(err, ""))
			break
		}
		if err != nil {
			t.Fatalf("Receive() = %v, want a task or ErrNoMessage", err)
		}
		took("consumer Z", m)
		delete(held, m.Task.ID)
		if strings.HasPrefix(m.Task.ID, "good") {
			t.Fatalf("Receive() = %s after every good task was acknowledged, want no good task again", describeReceive(m, err))
		}
		q.mustNack("consumer Z", m.Receipt, errBoom)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for id, n := range acked {
		if n != 1 {
			t.Errorf("%s was acknowledged %d times, want once", id, n)
		}
	}
	for i := range poison {
		q.mustBeDeadLettered(task.DeadLetter{Task: newTask(fmt.Sprintf("poison-%d", i)), Deliveries: max, LastError: errBoom.Error(), Reason: task.ReasonMaxDeliveries}, "after every poison task's fresh deliveries failed")
	}

	// Then, for the race detector, calls that nothing of the suite's own
	// synchronises (above, the test's mutex orders every call after the
	// one before): an operator lists while two consumers park tasks.
	h.Note("a new queue (MaxDeliveries 1): an operator lists at t=0; a second later a consumer's Nack parks a task; nothing of the suite's own orders the two calls")
	oq := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	oq.mustEnqueue(newTask("parked-once"))
	om := oq.mustReceive("consumer O", "parked-once", 1)
	var owg sync.WaitGroup
	owg.Go(func() { _, _ = oq.List(ctx) })
	owg.Go(func() {
		time.Sleep(time.Second) // virtual: after the List, which never waits
		_ = oq.Nack(ctx, om.Receipt, errBoom)
	})
	owg.Wait()
	if dl, err := oq.List(ctx); err != nil || len(dl) != 1 {
		t.Errorf("List() after parked-once was nacked on its only delivery = %d dead letters, %v, want 1, nil", len(dl), err)
	}

	const parked = 20
	h.Note("a new queue (MaxDeliveries 1): an operator lists while two consumers nack %d tasks into the dead-letter queue, nothing else synchronising them", parked)
	pq := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	for i := range parked {
		pq.mustEnqueue(newTask(fmt.Sprintf("parked-%d", i)))
	}
	var (
		pwg     sync.WaitGroup
		parkers sync.WaitGroup
		parking atomic.Bool // the consumers are still at work
	)
	parking.Store(true)
	for range 2 {
		parkers.Go(func() {
			for {
				m, err := pq.Receive(ctx, "consumer P")
				if err != nil {
					return
				}
				if err := pq.Nack(ctx, m.Receipt, errBoom); err != nil {
					return
				}
				runtime.Gosched() // let the operator's List run between two Nacks
			}
		})
	}
	pwg.Go(func() {
		parkers.Wait()
		parking.Store(false)
	})
	pwg.Go(func() {
		for parking.Load() {
			if _, err := pq.List(ctx); err != nil {
				return
			}
			runtime.Gosched()
		}
	})
	pwg.Wait()
	if dl, err := pq.List(ctx); err != nil || len(dl) != parked {
		t.Errorf("List() after %d tasks were nacked on their only delivery = %d dead letters, %v, want %d, nil", parked, len(dl), err, parked)
	}
}

func checkCancelledContext(t *testing.T, h *suites.History, e *target) {
	q := e.newQueue(task.DeadLetterOptions{MaxDeliveries: 1})
	q.mustEnqueue(newTask("held"), newTask("parked"), newTask("visible"))
	held := q.mustReceive("consumer A", "held", 1)
	parked := q.mustReceive("consumer A", "parked", 1)
	q.mustNack("consumer A", parked.Receipt, errTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.Note("every call below has a cancelled context")
	wantCancelled := func(call string, err error) {
		t.Helper()
		h.Record("caller", call+" with a cancelled context", outcome(err, "done anyway"))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", call, err)
		}
	}
	wantCancelled("Enqueue(new)", q.Enqueue(ctx, newTask("new")))
	m, err := q.Receive(ctx, "consumer B")
	wantCancelled("Receive()", err)
	if err == nil {
		h.Recordf("consumer B", "Receive() with a cancelled context", "%s", m)
	}
	wantCancelled("Ack(consumer A's receipt of held)", q.Ack(ctx, held.Receipt))
	wantCancelled("Nack(consumer A's receipt of held)", q.Nack(ctx, held.Receipt, errBoom))
	_, err = q.List(ctx)
	wantCancelled("List()", err)
	wantCancelled("Redrive(parked)", q.Redrive(ctx, "parked"))

	deadline, cancelDeadline := context.WithTimeout(context.Background(), time.Second)
	defer cancelDeadline()
	q.advance(time.Second, "the second context's deadline has passed")
	if _, err := q.Receive(deadline, "consumer B"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Receive() with a context past its deadline = %v, want an error wrapping context.DeadlineExceeded", err)
	}

	h.Note("nothing changed:")
	q.mustReceive("consumer B", "visible", 1)
	q.mustBeEmpty("consumer B", "after the cancelled calls (no new task, held still held)")
	q.mustBeDeadLettered(task.DeadLetter{Task: newTask("parked"), Deliveries: 1, LastError: errTimeout.Error(), Reason: task.ReasonMaxDeliveries}, "after a cancelled Redrive")
	q.mustNotBeDeadLettered("held", "after a cancelled Nack of its only delivery")
	if err := q.ack("consumer A", held.Receipt); err != nil {
		t.Errorf("Ack(%s) after a cancelled Ack and Nack = %v, want nil: the delivery is still current", q.holderOf(held.Receipt), err)
	}

	h.Note("a Receive whose context is cancelled while the validator looks at the task")
	gate := newGatedValidator("slow")
	q = e.newQueue(task.DeadLetterOptions{MaxDeliveries: 3, Validate: gate.validate})
	q.mustEnqueue(newTask("slow"))
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	var got task.Message
	var gotErr error
	recv := suites.Go(func() { got, gotErr = q.Receive(rctx, "consumer C") })
	select {
	case <-gate.started:
	case <-recv.Done():
		t.Fatalf("Receive() = %s without validating slow, want the validator called before its delivery", describeReceive(got, gotErr))
	}
	rcancel()
	h.Note("consumer C gives up (its context is cancelled); then the validator accepts slow")
	gate.answer <- nil
	recv.Wait()
	h.Record("consumer C", "Receive(), cancelled while the validator ran", describeReceive(got, gotErr))
	switch {
	case gotErr == nil && got.Task.ID == "slow" && got.Deliveries == 1:
		q.mustBeEmpty("consumer D", "while consumer C holds slow")
	case errors.Is(gotErr, context.Canceled):
		q.mustReceive("consumer D", "slow", 1)
	default:
		t.Errorf("Receive() whose context was cancelled while the validator ran = %s, want slow delivery 1 (it finished), or an error wrapping context.Canceled having delivered nothing", describeReceive(got, gotErr))
	}
}
