package lease

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The queue is safe for concurrent use (R9): a worker acknowledges while
// another leases, run under the race detector.
//
// The two goroutines are ordered by sleeps only, which give the race
// detector no happens-before edge: worker 2's Lease comes after worker 1's
// Lease and before worker 1's Ack, so any part of Ack that reads the
// queue's state without the lock races with worker 2's write.
func TestProbeAckRacingLease(t *testing.T) {
	ctx := context.Background()
	q, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := q.Enqueue(ctx, Task{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var err1, err2, ackErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		var l Lease
		l, err1 = q.Lease(ctx, "w1")
		time.Sleep(15 * time.Millisecond)
		if err1 == nil {
			ackErr = q.Ack(ctx, l.Token)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(2 * time.Millisecond)
		_, err2 = q.Lease(ctx, "w2")
	}()
	wg.Wait()
	if err1 != nil || err2 != nil || ackErr != nil {
		t.Fatalf("Lease w1: %v, Lease w2: %v, Ack w1: %v; want all nil", err1, err2, ackErr)
	}
}
