package deadletter

import (
	"context"
	"errors"
	"testing"
)

// While the validator looks at a task, the task is still in the queue: a
// duplicate Enqueue of it is refused.
func TestProbeNoGapWhileValidating(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{})
	release := make(chan struct{})
	q, _ := New(Options{Validate: func(Task) error {
		close(entered)
		<-release
		return nil
	}})
	q.Enqueue(ctx, Task{ID: "a"})
	done := make(chan error, 1)
	go func() {
		_, err := q.Receive(ctx, "c")
		done <- err
	}()
	<-entered
	err := q.Enqueue(ctx, Task{ID: "a"})
	close(release)
	if rerr := <-done; rerr != nil {
		t.Fatalf("Receive: %v", rerr)
	}
	if !errors.Is(err, ErrDuplicateMessage) {
		t.Fatalf("duplicate Enqueue while validating: %v", err)
	}
}
