package deadletter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// List racing Nacks that dead-letter tasks is no data race (run with -race).
func TestProbeListRacingNack(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{MaxDeliveries: 1})
	for i := 0; i < 40; i++ {
		q.Enqueue(ctx, Task{ID: fmt.Sprint("t", i)})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			m, err := q.Receive(ctx, "c")
			if err != nil {
				t.Error(err)
				return
			}
			q.Nack(ctx, m.Receipt, errors.New("boom"))
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for i := 0; i < 40; i++ {
		q.List(ctx)
		time.Sleep(50 * time.Microsecond)
	}
	<-done
	if dl, _ := q.List(ctx); len(dl) != 40 {
		t.Fatalf("%d dead letters", len(dl))
	}
}
