package deadletter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = time.Second
var _ = fakeclock.Advance

func mustNew(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// A Receive whose context ends during a slow validator either delivers,
// or returns the context's error having delivered nothing: the task still
// visible, its count unchanged (R12).
func TestProbeReceiveCancelledDuringValidation(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	first := true
	q := mustNew(t, Options{Validate: func(Task) error {
		if first {
			first = false
			close(entered)
			<-release
		}
		return nil
	}})
	if err := q.Enqueue(context.Background(), Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		m   Message
		err error
	}
	got := make(chan res, 1)
	go func() {
		m, err := q.Receive(ctx, "c1")
		got <- res{m, err}
	}()
	<-entered
	cancel()
	close(release)
	r := <-got
	if r.err == nil {
		if r.m.Task.ID != "a" || r.m.Deliveries != 1 {
			t.Fatalf("Receive = %v; want a, delivery 1", r.m)
		}
		return // delivered: allowed
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Receive = %v; want a delivery or context.Canceled", r.err)
	}
	m, err := q.Receive(context.Background(), "c2")
	if err != nil || m.Task.ID != "a" || m.Deliveries != 1 {
		t.Fatalf("next Receive = %v, %v; want a, delivery 1 (still visible, count unchanged)", m, err)
	}
}
