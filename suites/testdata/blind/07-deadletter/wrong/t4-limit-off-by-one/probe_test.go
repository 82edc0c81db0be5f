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
