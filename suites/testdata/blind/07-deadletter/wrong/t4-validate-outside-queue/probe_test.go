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
