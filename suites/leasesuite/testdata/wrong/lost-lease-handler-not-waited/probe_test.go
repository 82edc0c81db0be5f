package lease

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type lostExtend struct{ *Queue }

func (lostExtend) Extend(context.Context, LeaseToken, time.Duration) (Lease, error) {
	return Lease{}, ErrLeaseLost
}

// Promise (R11, R14): on a lost lease the handler's ctx is cancelled and the
// worker "goes on with the next one", but it works on at most Capacity
// tasks at once: a cancelled handler that has not returned still counts.
func TestProbeLostLeaseHandlerIsWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q.Enqueue(context.Background(), Task{ID: "a"})
		q.Enqueue(context.Background(), Task{ID: "b"})
		var mu sync.Mutex
		running, most := 0, 0
		w := NewWorker(lostExtend{q}, WorkerOptions{Name: "w", Capacity: 1}, func(ctx context.Context, l Lease) error {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			<-ctx.Done()
			time.Sleep(5 * time.Second) // cleaning up
			return ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- w.Run(ctx) }()
		time.Sleep(time.Minute)
		cancel()
		<-ran
		if most > 1 {
			t.Errorf("Capacity 1 worker ran %d handlers at once", most)
		}
	})
}
