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

// A task the validator rejects is dead-lettered with its count unchanged,
// 0 if it was never delivered (R7); the next task is delivered.
func TestProbeMalformedCountUnchanged(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{Validate: func(tk Task) error {
		if tk.DocumentID == "" {
			return errors.New("no document")
		}
		return nil
	}})
	if err := q.Enqueue(ctx, Task{ID: "bad"}); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "good", DocumentID: "d1"}); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil || m.Task.ID != "good" || m.Deliveries != 1 {
		t.Fatalf("Receive = %v, %v; want good, delivery 1", m, err)
	}
	dl, err := q.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || dl[0].Task.ID != "bad" || dl[0].Reason != ReasonMalformed || dl[0].Deliveries != 0 || dl[0].LastError != "no document" {
		t.Fatalf("List = %v; want bad, malformed, 0 deliveries, \"no document\"", dl)
	}
}
