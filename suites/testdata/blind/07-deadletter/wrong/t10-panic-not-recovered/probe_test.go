package deadletter

import (
	"context"
	"strings"
	"testing"
)

// A panicking validator means the task is malformed: it is dead-lettered
// with the panic's value in its last error, and the next task is delivered.
func TestProbeValidatorPanic(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{Validate: func(t Task) error {
		if t.ID == "bad" {
			panic("nil document")
		}
		return nil
	}})
	q.Enqueue(ctx, Task{ID: "bad"})
	q.Enqueue(ctx, Task{ID: "good"})
	var (
		m   Message
		err error
		pv  any
	)
	func() {
		defer func() { pv = recover() }()
		m, err = q.Receive(ctx, "c")
	}()
	if pv != nil {
		t.Fatalf("Receive panicked: %v", pv)
	}
	if err != nil || m.Task.ID != "good" {
		t.Fatalf("got %v %v", m, err)
	}
	dl, _ := q.List(ctx)
	if len(dl) != 1 || dl[0].Reason != ReasonMalformed || !strings.Contains(dl[0].LastError, "nil document") {
		t.Fatalf("DLQ = %v", dl)
	}
}
