package lease

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The queue is safe for concurrent use: an Ack racing a Lease is no data
// race (run with -race).
func TestProbeAckRacingLease(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{})
	for i := 0; i < 50; i++ {
		q.Enqueue(ctx, Task{ID: string(rune('a'+i%26)) + string(rune('A'+i/26))})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			q.Lease(ctx, "w1")
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for i := 0; i < 50; i++ {
		if err := q.Ack(ctx, "never-issued"); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Ack: %v", err)
		}
		time.Sleep(50 * time.Microsecond)
	}
	<-done
}
