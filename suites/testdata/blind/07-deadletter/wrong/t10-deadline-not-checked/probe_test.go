package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A context past its deadline is done too: Enqueue and Receive return an
// error wrapping context.DeadlineExceeded and change nothing.
func TestProbePastDeadlineChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		q.Enqueue(context.Background(), Task{ID: "a"})
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		if err := q.Enqueue(ctx, Task{ID: "b"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Enqueue past deadline: %v", err)
		}
		if m, err := q.Receive(ctx, "c"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive past deadline: %v %v", m, err)
		}
		m, err := q.Receive(context.Background(), "c")
		if err != nil || m.Task.ID != "a" || m.Deliveries != 1 {
			t.Fatalf("%v %v", m, err)
		}
	})
}
