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
