package deadletter

import (
	"context"
	"errors"
	"testing"
)

// slowErr's Error method blocks until released.
type slowErr struct {
	entered chan struct{}
	release chan struct{}
}

func (e *slowErr) Error() string {
	select {
	case e.entered <- struct{}{}:
	default:
	}
	<-e.release
	return "slow failure"
}

// While a last delivery's Nack reads its cause's text, the task is in the
// queue or in the DLQ: a duplicate Enqueue is refused.
func TestProbeNoGapWhileNackMoves(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{MaxDeliveries: 1})
	q.Enqueue(ctx, Task{ID: "a"})
	m, err := q.Receive(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	cause := &slowErr{entered: make(chan struct{}, 1), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- q.Nack(ctx, m.Receipt, cause) }()
	<-cause.entered
	dupErr := q.Enqueue(ctx, Task{ID: "a"})
	close(cause.release)
	if err := <-done; err != nil {
		t.Fatalf("Nack: %v", err)
	}
	if !errors.Is(dupErr, ErrDuplicateMessage) {
		t.Fatalf("duplicate Enqueue while the Nack moved the task: %v", dupErr)
	}
	dl, _ := q.List(ctx)
	if len(dl) != 1 || dl[0].LastError != "slow failure" {
		t.Fatalf("DLQ = %v", dl)
	}
}
