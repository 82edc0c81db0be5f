package deadletter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = strings.Contains
var _ = fakeclock.Now
var _ = time.Second

var bg = context.Background()

func mustQ(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func enq(t *testing.T, q *Queue, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := q.Enqueue(bg, Task{ID: id, Subject: "subj " + id}); err != nil {
			t.Fatal(err)
		}
	}
}

func recv(t *testing.T, q *Queue) Message {
	t.Helper()
	m, err := q.Receive(bg, "c")
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return m
}

func dlq(t *testing.T, q *Queue) []DeadLetter {
	t.Helper()
	l, err := q.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProbeEnqueueOfDeadLetteredID(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, errors.New("x")); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(bg, Task{ID: "a"}); !errors.Is(err, ErrDuplicateMessage) {
			t.Fatalf("enqueue of dead-lettered id: %v", err)
		}
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("receive: %v", err)
		}
	})
}
