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

func TestProbeNackLimitExact(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 3})
		defer q.Close()
		enq(t, q, "a")
		for i := 1; i <= 3; i++ {
			m := recv(t, q)
			if err := q.Nack(bg, m.Receipt, errors.New("fail")); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth delivery %v %v", m, err)
		}
		if l := dlq(t, q); len(l) != 1 || l[0].Deliveries != 3 || l[0].LastError != "fail" {
			t.Fatalf("dlq %v", l)
		}
	})
}
