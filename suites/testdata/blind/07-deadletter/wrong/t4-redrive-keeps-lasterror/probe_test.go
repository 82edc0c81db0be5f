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
