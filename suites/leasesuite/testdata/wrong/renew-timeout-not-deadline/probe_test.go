package lease

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

type stallingExtend struct{ *Queue }

func (s stallingExtend) Extend(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error) {
	<-ctx.Done() // the queue never answers
	return Lease{}, ctx.Err()
}

// Promise (R14): the handler's ctx is cancelled "at the latest when the lease
// ends without a renewal", even when Extend does not answer.
func TestProbeStalledRenewalStopsTheHandlerByExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q.Enqueue(context.Background(), Task{ID: "a"})
		var expires, stopped time.Time
		done := make(chan struct{})
		w := NewWorker(stallingExtend{q}, WorkerOptions{Name: "w"}, func(ctx context.Context, l Lease) error {
			defer close(done)
			expires = l.Expires
			<-ctx.Done()
			stopped = time.Now()
			return ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error)
		go func() { ran <- w.Run(ctx) }()
		<-done
		cancel()
		<-ran
		if stopped.After(expires) {
			t.Errorf("handler cancelled %v after its lease ended", stopped.Sub(expires))
		}
	})
}
