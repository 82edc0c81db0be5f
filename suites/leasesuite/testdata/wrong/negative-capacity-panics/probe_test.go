package lease

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
)

// Promise (NewWorker doc): "opts.Capacity is how many tasks it works on at
// once (zero or less means 1)".
func TestProbeNegativeCapacityMeansOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		q.Enqueue(context.Background(), Task{ID: "a"})
		handled := make(chan struct{}, 1)
		w := NewWorker(q, WorkerOptions{Name: "w", Capacity: -1}, func(context.Context, Lease) error {
			handled <- struct{}{}
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					ran <- fmt.Errorf("panic: %v", r)
				}
			}()
			ran <- w.Run(ctx)
		}()
		select {
		case <-handled:
			cancel()
			<-ran
		case err := <-ran:
			t.Errorf("Run with Capacity -1 returned before working: %v", err)
		}
	})
}
