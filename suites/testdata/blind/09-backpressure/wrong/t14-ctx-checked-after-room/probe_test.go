package backpressure

import (
	"context"
	"errors"
	"testing"
)

func TestProbeDoneContextOnFullQueue(t *testing.T) {
	q := New(Options{Capacity: 1})
	q.Submit(context.Background(), "a", "k1", Task{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := q.Submit(ctx, "b", "k2", Task{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
		t.Errorf("cancelled Submit to a full queue: %v, want the context's error and not ErrQueueFull", err)
	}
	if r := q.Stats().Rejected; r != 0 {
		t.Errorf("Rejected = %d, want 0", r)
	}
}
