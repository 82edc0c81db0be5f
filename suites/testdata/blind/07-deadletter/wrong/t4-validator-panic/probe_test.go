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
