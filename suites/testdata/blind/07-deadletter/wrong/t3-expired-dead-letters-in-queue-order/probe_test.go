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

func TestProbeDeadLettersInExpiryOrder(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 2, VisibilityTimeout: 30 * time.Second})
		defer q.Close()
		enq(t, q, "A", "B")
		if m := recv(t, q); m.Task.ID != "A" { // A d1, expires t=30
			t.Fatal(m)
		}
		time.Sleep(time.Second)
		mb := recv(t, q) // B d1 at t=1
		if mb.Task.ID != "B" {
			t.Fatal(mb)
		}
		if err := q.Nack(bg, mb.Receipt, errors.New("b1")); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, q); m.Task.ID != "B" || m.Deliveries != 2 { // B's last, expires t=31
			t.Fatal(m)
		}
		time.Sleep(29 * time.Second)                                // t=30: A's first delivery ends
		if m := recv(t, q); m.Task.ID != "A" || m.Deliveries != 2 { // A's last, expires t=60
			t.Fatal(m)
		}
		time.Sleep(31 * time.Second) // t=61
		l := dlq(t, q)
		if len(l) != 2 || l[0].Task.ID != "B" || l[1].Task.ID != "A" {
			t.Fatalf("dlq order %v, want B (expired t=31) then A (t=60)", l)
		}
	})
}
