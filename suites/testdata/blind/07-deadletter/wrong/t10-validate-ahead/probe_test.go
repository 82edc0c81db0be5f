package deadletter

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Receive validates the task it is about to deliver and no other: a
// malformed task behind the delivered one is not validated (nor parked) yet.
func TestProbeOnlyNextTaskValidated(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string
	q, _ := New(Options{Validate: func(t Task) error {
		mu.Lock()
		seen = append(seen, t.ID)
		mu.Unlock()
		if t.ID == "bad" {
			return errors.New("malformed")
		}
		return nil
	}})
	q.Enqueue(ctx, Task{ID: "good"})
	q.Enqueue(ctx, Task{ID: "bad"})
	m, err := q.Receive(ctx, "c")
	if err != nil || m.Task.ID != "good" {
		t.Fatalf("%v %v", m, err)
	}
	dl, _ := q.List(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "good" || len(dl) != 0 {
		t.Fatalf("validator called on %v, DLQ %v; want only good, empty DLQ", seen, dl)
	}
}
