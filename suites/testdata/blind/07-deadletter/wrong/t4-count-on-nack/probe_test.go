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
