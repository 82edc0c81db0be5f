package deadletter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = time.Second
	_ = strings.Contains
)

// closer is what a queue with a goroutine offers.
type closer interface{ Close() error }

func newQ(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := any(q).(closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return q
}

// run runs f in a bubble and closes the queue it builds before the bubble ends.
func run(t *testing.T, o Options, f func(t *testing.T, q *Queue)) {
	fakeclock.Run(t, func(t *testing.T) {
		q, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := any(q).(closer); ok {
			defer c.Close()
		}
		f(t, q)
	})
}

var bg = context.Background()

func tk(id string) Task {
	return Task{ID: id, Account: "acct", DocumentID: "doc-" + id, Recipient: id + "@x.io"}
}

func recv(t *testing.T, q *Queue, who string) Message {
	t.Helper()
	m, err := q.Receive(bg, who)
	if err != nil {
		t.Fatalf("Receive(%s): %v", who, err)
	}
	return m
}

func list(t *testing.T, q *Queue) []DeadLetter {
	t.Helper()
	l, err := q.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// R4: the count goes up when a task is delivered, whether the last delivery was nacked or its consumer crashed.
func TestProbeCrashedDeliveriesCount(t *testing.T) {
	run(t, Options{MaxDeliveries: 5, VisibilityTimeout: 10 * time.Second}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		var got []int
		for i := range 5 {
			m := recv(t, q, "c")
			got = append(got, m.Deliveries)
			if i%2 == 0 {
				_ = q.Nack(bg, m.Receipt, errors.New("x"))
			} else {
				fakeclock.Advance(10 * time.Second) // crash
			}
		}
		if fmt.Sprint(got) != "[1 2 3 4 5]" {
			t.Fatalf("delivery counts %v, want [1 2 3 4 5]", got)
		}
	})
}

// R6: LastError is the last failure recorded, kept through later crashes, which record nothing.
func TestProbeCrashesKeepLastError(t *testing.T) {
	run(t, Options{MaxDeliveries: 3, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("smtp: 451 try later"))
		for range 2 {
			recv(t, q, "c")
			fakeclock.Advance(time.Minute)
		}
		l := list(t, q)
		if len(l) != 1 || l[0].LastError != "smtp: 451 try later" || l[0].Deliveries != 3 {
			t.Fatalf("DLQ %v; want last error kept through two crashes", l)
		}
	})
}

// R3/R5: visible again from Expires on; a crashed last delivery is parked at Expires, not a nanosecond before or after.
func TestProbeExpiryAtTheInstant(t *testing.T) {
	run(t, Options{MaxDeliveries: 2, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		recv(t, q, "c1")
		fakeclock.Advance(time.Minute - time.Nanosecond)
		if _, err := q.Receive(bg, "c2"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("1 ns before Expires: %v", err)
		}
		fakeclock.Advance(time.Nanosecond)
		m := recv(t, q, "c2")
		fakeclock.Advance(time.Minute)
		if l := list(t, q); len(l) != 1 || l[0].Deliveries != 2 {
			t.Fatalf("at the last delivery's Expires: DLQ %v, want the task (delivery %d)", l, m.Deliveries)
		}
	})
}

// R5: with MaxDeliveries 3 the third delivery happens and its Nack parks the task; there is never a fourth.
func TestProbeLimitIsExact(t *testing.T) {
	run(t, Options{MaxDeliveries: 3}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		for i := 1; i <= 3; i++ {
			m := recv(t, q, "c")
			if err := q.Nack(bg, m.Receipt, fmt.Errorf("fail %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth Receive = %v, %v; want ErrNoMessage", m, err)
		}
		if l := list(t, q); len(l) != 1 || l[0].Deliveries != 3 || l[0].LastError != "fail 3" {
			t.Fatalf("DLQ %v", l)
		}
	})
}

// R9: List returns a copy: changing it changes nothing in the queue.
func TestProbeListIsACopy(t *testing.T) {
	run(t, Options{MaxDeliveries: 1}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("x"))
		l := list(t, q)
		l[0].LastError = "edited"
		l[0].Task.ID = "zzz"
		if l2 := list(t, q); l2[0].LastError != "x" || l2[0].Task.ID != "a" {
			t.Fatalf("after editing List's result: %v", l2)
		}
	})
}

// R3: a nacked task keeps its place: it was enqueued when it was.
func TestProbeNackedTaskKeepsItsPlace(t *testing.T) {
	run(t, Options{}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		_ = q.Enqueue(bg, tk("b"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("x"))
		if m := recv(t, q, "c"); m.Task.ID != "a" || m.Deliveries != 2 {
			t.Fatalf("after a's Nack: %v, want a again (delivery 2)", m)
		}
	})
}

// R10: Redrive forgets the last error: a redriven task that then only crashes is parked with "".
func TestProbeRedriveForgetsLastError(t *testing.T) {
	run(t, Options{MaxDeliveries: 1, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("old cause"))
		_ = q.Redrive(bg, "a")
		recv(t, q, "c") // crashes
		fakeclock.Advance(time.Minute)
		l := list(t, q)
		if len(l) != 1 || l[0].LastError != "" || l[0].Deliveries != 1 {
			t.Fatalf("DLQ %v; want the redriven task with no last error", l)
		}
	})
}

// R10: Redrive moves a dead letter to the back of the queue.
func TestProbeRedriveGoesToTheBack(t *testing.T) {
	run(t, Options{MaxDeliveries: 1}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("x"))
		_ = q.Enqueue(bg, tk("b"))
		if err := q.Redrive(bg, "a"); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, q, "c"); m.Task.ID != "b" {
			t.Fatalf("first after the redrive: %s, want b (a went to the back)", m.Task.ID)
		}
		if m := recv(t, q, "c"); m.Task.ID != "a" || m.Deliveries != 1 {
			t.Fatalf("then %v, want a, delivery 1", m)
		}
	})
}

// R8: a stale receipt changes nothing, the last error included.
func TestProbeStaleNackKeepsLastError(t *testing.T) {
	run(t, Options{MaxDeliveries: 3, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m1 := recv(t, q, "c1")
		_ = q.Nack(bg, m1.Receipt, errors.New("real cause"))
		m2 := recv(t, q, "c2")
		if err := q.Nack(bg, m1.Receipt, errors.New("zombie's cause")); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("stale Nack = %v", err)
		}
		fakeclock.Advance(time.Minute) // m2 crashes
		m3 := recv(t, q, "c3")
		fakeclock.Advance(time.Minute)
		l := list(t, q)
		if len(l) != 1 || l[0].LastError != "real cause" {
			t.Fatalf("DLQ %v (deliveries %d, %d); want last error \"real cause\"", l, m2.Deliveries, m3.Deliveries)
		}
	})
}

// R9: dead letters are listed in the order they were dead-lettered: last deliveries that
// expired a second apart, noticed by one List, in the order they expired.
func TestProbeExpiriesListedInOrder(t *testing.T) {
	run(t, Options{MaxDeliveries: 1, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		var want []string
		for i := range 12 {
			id := fmt.Sprintf("t%02d", i)
			_ = q.Enqueue(bg, tk(id))
		}
		// receive them in reverse order of IDs? no: oldest first; expiries a second apart
		for range 12 {
			m := recv(t, q, "c")
			want = append(want, m.Task.ID)
			fakeclock.Advance(time.Second)
		}
		fakeclock.Advance(time.Hour)
		var got []string
		for _, d := range list(t, q) {
			got = append(got, d.Task.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("DLQ order %v, want %v (order of expiry)", got, want)
		}
	})
}

// R11: while the validator looks at a task, the task is in one of the two queues: a duplicate Enqueue is refused.
func TestProbeNoGapWhileValidating(t *testing.T) {
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	run(t, Options{Validate: func(Task) error { entered <- struct{}{}; <-hold; return errors.New("malformed") }}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		done := make(chan error, 1)
		go func() { _, err := q.Receive(bg, "c"); done <- err }()
		<-entered
		if err := q.Enqueue(bg, tk("a")); !errors.Is(err, ErrDuplicateMessage) {
			t.Errorf("Enqueue of a task being validated = %v, want ErrDuplicateMessage", err)
		}
		if err := q.Redrive(bg, "a"); !errors.Is(err, ErrNotDeadLettered) {
			t.Errorf("Redrive of a task being validated = %v, want ErrNotDeadLettered", err)
		}
		close(hold)
		if err := <-done; !errors.Is(err, ErrNoMessage) {
			t.Errorf("Receive = %v", err)
		}
		if l := list(t, q); len(l) != 1 {
			t.Errorf("DLQ %v, want exactly one copy of a", l)
		}
	})
}

// R7: a task the validator rejects is dead-lettered with its count unchanged (it was not delivered).
func TestProbeMalformedNotCounted(t *testing.T) {
	reject := false
	run(t, Options{MaxDeliveries: 5, Validate: func(Task) error {
		if reject {
			return errors.New("recipient unknown")
		}
		return nil
	}}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("a"))
		m := recv(t, q, "c")
		_ = q.Nack(bg, m.Receipt, errors.New("flaky"))
		reject = true
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("Receive of a rejected task: %v", err)
		}
		l := list(t, q)
		if len(l) != 1 || l[0].Deliveries != 1 || l[0].LastError != "recipient unknown" || l[0].Reason != ReasonMalformed {
			t.Fatalf("DLQ %v; want 1 delivery, the validator's words, malformed", l)
		}
	})
}

// R7: a validator that panics means the task is malformed: dead-lettered at once with a text naming the panic's value.
func TestProbeValidatorPanicIsMalformed(t *testing.T) {
	run(t, Options{Validate: func(t Task) error {
		if t.ID == "bad" {
			panic("parser exploded")
		}
		return nil
	}}, func(t *testing.T, q *Queue) {
		_ = q.Enqueue(bg, tk("bad"))
		_ = q.Enqueue(bg, tk("good"))
		var m Message
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("Receive panicked: %v", p)
				}
			}()
			m, err = q.Receive(bg, "c")
		}()
		if err != nil || m.Task.ID != "good" {
			t.Fatalf("Receive = %v, %v; want the good task", m, err)
		}
		l := list(t, q)
		if len(l) != 1 || l[0].Reason != ReasonMalformed || !strings.Contains(l[0].LastError, "parser exploded") {
			t.Fatalf("DLQ %v", l)
		}
	})
}
