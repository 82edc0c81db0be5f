package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type lostNack struct{ *Queue }

func (l lostNack) Nack(ctx context.Context, tok LeaseToken, d time.Duration) error {
	return ErrLeaseLost // the lease ran out just before the release
}

// Promise (R15): "ErrLeaseLost from Ack or Nack is not an error of the
// worker: it goes on."
func TestProbeLostNackDoesNotStopTheWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		q.Enqueue(context.Background(), Task{ID: "a"})
		q.Enqueue(context.Background(), Task{ID: "b"})
		sawB := make(chan struct{})
		w := NewWorker(lostNack{q}, WorkerOptions{Name: "w"}, func(ctx context.Context, l Lease) error {
			if l.Task.ID == "b" {
				close(sawB)
				return nil
			}
			return errors.New("boom")
		})
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- w.Run(ctx) }()
		select {
		case <-sawB:
		case err := <-ran:
			t.Fatalf("Run stopped after a Nack said ErrLeaseLost: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("b never handled")
		}
		cancel()
		<-ran
	})
}
