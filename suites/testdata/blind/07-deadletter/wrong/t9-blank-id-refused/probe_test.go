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

// Only an empty ID is refused; any other task is queued and comes back
// exactly as it went in (R2).
func TestProbeBlankButNonEmptyIDQueued(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{})
	for _, id := range []string{" ", "\t"} {
		if err := q.Enqueue(ctx, Task{ID: id}); err != nil {
			t.Fatalf("Enqueue(ID %q) = %v; want nil (not empty)", id, err)
		}
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil || m.Task.ID != " " {
		t.Fatalf("Receive = %v, %v; want the task with ID \" \"", m, err)
	}
	if err := q.Enqueue(ctx, Task{}); !errors.Is(err, ErrNoTaskID) {
		t.Fatalf("Enqueue(empty ID) = %v; want ErrNoTaskID", err)
	}
}
