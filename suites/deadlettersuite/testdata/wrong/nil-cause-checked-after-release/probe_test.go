package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R8): "Nack with a nil cause fails with ErrNoCause and changes
// nothing": the delivery can still be acknowledged.
func TestProbeNilCauseChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		if err := q.Nack(ctx, m.Receipt, nil); !errors.Is(err, ErrNoCause) {
			t.Fatalf("Nack(nil): %v", err)
		}
		if err := q.Ack(ctx, m.Receipt); err != nil {
			t.Errorf("Ack after a refused Nack(nil): %v, want the delivery still current", err)
		}
	})
}
