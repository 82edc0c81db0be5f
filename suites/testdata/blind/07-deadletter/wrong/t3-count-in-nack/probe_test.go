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

func TestProbeCrashesAreCounted(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 3})
		defer q.Close()
		enq(t, q, "poison")
		for i := 1; i <= 3; i++ {
			m := recv(t, q)
			if m.Deliveries != i {
				t.Fatalf("delivery %d has count %d", i, m.Deliveries)
			}
			time.Sleep(DefaultDeliveryTimeout) // the consumer crashed
		}
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth receive: %v", err)
		}
		l := dlq(t, q)
		if len(l) != 1 || l[0].Deliveries != 3 || l[0].Reason != ReasonMaxDeliveries || l[0].LastError != "" {
			t.Fatalf("dlq %v", l)
		}
	})
}
