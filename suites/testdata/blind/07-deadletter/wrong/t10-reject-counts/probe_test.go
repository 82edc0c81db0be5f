package deadletter

import (
	"context"
	"errors"
	"testing"
)

// A rejected task is dead-lettered with its count unchanged: 0 if it was
// never delivered.
func TestProbeRejectedNotCounted(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{Validate: func(t Task) error {
		if t.DocumentID == "" {
			return errors.New("no document")
		}
		return nil
	}})
	q.Enqueue(ctx, Task{ID: "bad"})
	q.Enqueue(ctx, Task{ID: "good", DocumentID: "d"})
	m, err := q.Receive(ctx, "c")
	if err != nil || m.Task.ID != "good" || m.Deliveries != 1 {
		t.Fatalf("got %v %v", m, err)
	}
	dl, _ := q.List(ctx)
	if len(dl) != 1 || dl[0].Task.ID != "bad" || dl[0].Deliveries != 0 || dl[0].Reason != ReasonMalformed || dl[0].LastError != "no document" {
		t.Fatalf("DLQ = %v", dl)
	}
}
