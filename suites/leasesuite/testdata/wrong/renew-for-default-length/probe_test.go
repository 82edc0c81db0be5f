package lease

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type extendRecorder struct {
	*Queue
	mu sync.Mutex
	ds []time.Duration
}

func (r *extendRecorder) Extend(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error) {
	r.mu.Lock()
	r.ds = append(r.ds, d)
	r.mu.Unlock()
	return r.Queue.Extend(ctx, tok, d)
}

// Promise (R13): the worker renews "each time for the lease's own length
// (the visibility timeout the queue granted)": 2 minutes on a 2-minute queue.
func TestProbeRenewsForTheGrantedLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{VisibilityTimeout: 2 * time.Minute})
		q.Enqueue(context.Background(), Task{ID: "a"})
		rec := &extendRecorder{Queue: q}
		done := make(chan struct{})
		w := NewWorker(rec, WorkerOptions{Name: "w"}, func(ctx context.Context, l Lease) error {
			defer close(done)
			select {
			case <-time.After(10 * time.Minute):
				return nil
			case <-ctx.Done():
				t.Errorf("handler cancelled after %v of work", time.Since(l.Expires.Add(-2*time.Minute)))
				return ctx.Err()
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error)
		go func() { ran <- w.Run(ctx) }()
		<-done
		cancel()
		<-ran
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.ds) == 0 {
			t.Fatal("no renewal")
		}
		for _, d := range rec.ds {
			if d != 2*time.Minute {
				t.Errorf("renewed for %v, want the granted 2m", d)
				break
			}
		}
	})
}
