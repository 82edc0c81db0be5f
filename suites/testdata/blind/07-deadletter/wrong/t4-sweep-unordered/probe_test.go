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

// R9: dead letters are listed in the order they were dead-lettered: last deliveries that
// expired a second apart, noticed by one List, in the order they expired.
func TestProbeExpiriesListedInOrder(t *testing.T) {
	run(t, Options{MaxDeliveries: 1, VisibilityTimeout: time.Minute}, func(t *testing.T, q *Queue) {
		var want []string
		for i := range 12 {
			id := fmt.Sprintf("t%02d", i)
			_ = q.Enqueue(bg, tk(id))
		}
		// receive them in reverse order of IDs? no: oldest first; expiries a second apart
		for range 12 {
			m := recv(t, q, "c")
			want = append(want, m.Task.ID)
			fakeclock.Advance(time.Second)
		}
		fakeclock.Advance(time.Hour)
		var got []string
		for _, d := range list(t, q) {
			got = append(got, d.Task.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("DLQ order %v, want %v (order of expiry)", got, want)
		}
	})
}
