package lease

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// heldCounter counts the leases the worker holds: leased and not yet
// settled (the Ack or Nack has not returned).
type heldCounter struct {
	*Queue
	mu        sync.Mutex
	held, max int
}

func (h *heldCounter) Lease(ctx context.Context, n string) (Lease, error) {
	l, err := h.Queue.Lease(ctx, n)
	if err == nil {
		h.mu.Lock()
		h.held++
		h.max = max(h.max, h.held)
		h.mu.Unlock()
	}
	return l, err
}

func (h *heldCounter) Ack(ctx context.Context, tok LeaseToken) error {
	time.Sleep(5 * time.Second) // a slow queue
	err := h.Queue.Ack(ctx, tok)
	h.mu.Lock()
	h.held--
	h.mu.Unlock()
	return err
}

// Promise (R11): the worker "holds a lease only for a task it is working
// on": with Capacity 1 it never holds two leases, even while an Ack is slow.
func TestProbeNoLeaseWhileTheLastIsUnsettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, _ := New(Options{})
		for _, id := range []string{"a", "b", "c"} {
			q.Enqueue(context.Background(), Task{ID: id})
		}
		h := &heldCounter{Queue: q}
		w := NewWorker(h, WorkerOptions{Name: "w", Capacity: 1}, func(context.Context, Lease) error { return nil })
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- w.Run(ctx) }()
		time.Sleep(time.Minute)
		cancel()
		<-ran
		if h.max > 1 {
			t.Errorf("Capacity 1 worker held %d leases at once", h.max)
		}
	})
}
