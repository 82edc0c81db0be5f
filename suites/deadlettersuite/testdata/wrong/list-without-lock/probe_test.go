package deadletter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Promise: "Every method is safe for concurrent use": an operator listing
// while consumers park tasks (run with -race).
func TestProbeListIsSafeConcurrently(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{MaxDeliveries: 1})
	for i := range 50 {
		q.Enqueue(ctx, Task{ID: fmt.Sprint("t", i)})
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			m, err := q.Receive(ctx, "c")
			if err != nil {
				return
			}
			q.Nack(ctx, m.Receipt, errors.New("boom"))
		}
	})
	wg.Go(func() {
		for range 50 {
			q.List(ctx)
		}
	})
	wg.Wait()
}
