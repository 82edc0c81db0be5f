package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R9): List returns every dead letter "for as long as it is not
// redriven (400 days later too)".
func TestProbeDeadLettersStay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 1})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m.Receipt, errors.New("boom"))
		time.Sleep(15 * 24 * time.Hour)
		if dl, _ := q.List(ctx); len(dl) != 1 {
			t.Errorf("15 days later the DLQ holds %v, want a", dl)
		}
	})
}
