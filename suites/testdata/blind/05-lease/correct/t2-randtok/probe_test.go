package lease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func mustQ(t *testing.T, vt time.Duration) *Queue {
	t.Helper()
	q, err := New(Options{VisibilityTimeout: vt})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestProbeQueueRules(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := mustQ(t, time.Minute)
		if err := q.Enqueue(ctx, Task{}); !errors.Is(err, ErrInvalidTask) {
			t.Fatalf("empty id: %v", err)
		}
		q.Enqueue(ctx, Task{ID: "a", Subject: "first"})
		q.Enqueue(ctx, Task{ID: "b"})
		if err := q.Enqueue(ctx, Task{ID: "a", Subject: "second"}); !errors.Is(err, ErrDuplicateTask) {
			t.Fatalf("dup: %v", err)
		}
		l, err := q.Lease(ctx, "w1")
		if err != nil || l.Task.ID != "a" || l.Task.Subject != "first" || l.Attempt != 1 || !l.Expires.Equal(time.Now().Add(time.Minute)) || l.Holder != "w1" {
			t.Fatalf("lease: %+v %v", l, err)
		}
		if err := q.Enqueue(ctx, Task{ID: "a"}); !errors.Is(err, ErrDuplicateTask) {
			t.Fatalf("dup leased: %v", err)
		}
		l2, _ := q.Lease(ctx, "w2")
		if l2.Task.ID != "b" {
			t.Fatalf("second lease %+v", l2)
		}
		if _, err := q.Lease(ctx, "w3"); !errors.Is(err, ErrNoTask) {
			t.Fatalf("want no task: %v", err)
		}
		fakeclock.Advance(time.Minute - 1)
		if _, err := q.Lease(ctx, "w3"); !errors.Is(err, ErrNoTask) {
			t.Fatalf("still leased: %v", err)
		}
		// renew a (1ns left) for 5s, shorten later
		if nl, err := q.Extend(ctx, l.Token, 5*time.Second); err != nil || !nl.Expires.Equal(time.Now().Add(5*time.Second)) || nl.Token != l.Token || nl.Attempt != 1 {
			t.Fatalf("extend: %+v %v", nl, err)
		}
		fakeclock.Advance(1) // b expired now
		l3, err := q.Lease(ctx, "w3")
		if err != nil || l3.Task.ID != "b" || l3.Attempt != 2 || l3.Token == l2.Token {
			t.Fatalf("redelivery: %+v %v", l3, err)
		}
		if err := q.Ack(ctx, l2.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("old ack: %v", err)
		}
		if _, err := q.Extend(ctx, l.Token, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Extend(ctx, l.Token, 0); !errors.Is(err, ErrInvalidDuration) {
			t.Fatal(err)
		}
		fakeclock.Advance(1)
		if _, err := q.Extend(ctx, l.Token, time.Hour); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("expired extend: %v", err)
		}
		if err := q.Ack(ctx, l.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("expired ack: %v", err)
		}
		// ack b; re-enqueue b
		if err := q.Ack(ctx, l3.Token); err != nil {
			t.Fatal(err)
		}
		if err := q.Ack(ctx, l3.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatal(err)
		}
		q.Enqueue(ctx, Task{ID: "b"})
		la, _ := q.Lease(ctx, "w") // a again (attempt 2)
		lb, _ := q.Lease(ctx, "w")
		if la.Task.ID != "a" || la.Attempt != 2 || lb.Task.ID != "b" || lb.Attempt != 1 {
			t.Fatalf("%v %v", la, lb)
		}
		for _, old := range []LeaseToken{l.Token, l2.Token, l3.Token} {
			if lb.Token == old || la.Token == old {
				t.Fatal("token reused")
			}
		}
		// nack with delay
		if err := q.Nack(ctx, la.Token, time.Hour+1); err != nil {
			t.Fatal(err)
		}
		if err := q.Ack(ctx, lb.Token); err != nil {
			t.Fatal(err)
		}
		if err := q.Ack(ctx, la.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatal(err)
		}
		fakeclock.Advance(time.Hour)
		if _, err := q.Lease(ctx, "w"); !errors.Is(err, ErrNoTask) {
			t.Fatal(err)
		}
		fakeclock.Advance(1)
		if l, err := q.Lease(ctx, "w"); err != nil || l.Attempt != 3 {
			t.Fatal(l, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := q.Lease(cctx, "w"); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	})
}

func TestProbeConcurrentAcks(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 50; round++ {
		q := mustQ(t, 0)
		q.Enqueue(ctx, Task{ID: "x"})
		l, _ := q.Lease(ctx, "w")
		var ok atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 && q.Ack(ctx, l.Token) == nil || i%2 == 1 && q.Nack(ctx, l.Token, 0) == nil {
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 1 {
			t.Fatalf("%d successes", ok.Load())
		}
	}
}

// rec wraps a queue and records calls.
type rec struct {
	LeaseQueue
	mu     sync.Mutex
	calls  []string
	extend []time.Duration
}

func (r *rec) log(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }
func (r *rec) Extend(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error) {
	r.mu.Lock()
	r.extend = append(r.extend, d)
	r.mu.Unlock()
	return r.LeaseQueue.Extend(ctx, tok, d)
}
func (r *rec) Ack(ctx context.Context, tok LeaseToken) error {
	r.log("ack")
	return r.LeaseQueue.Ack(ctx, tok)
}
func (r *rec) Nack(ctx context.Context, tok LeaseToken, d time.Duration) error {
	r.log("nack")
	return r.LeaseQueue.Nack(ctx, tok, d)
}

func TestProbeWorkerLongWorkAndShutdown(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, 45*time.Second)
		r := &rec{LeaseQueue: q}
		q.Enqueue(context.Background(), Task{ID: "long"})
		q.Enqueue(context.Background(), Task{ID: "stuck"})
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled atomic.Bool
		w := NewWorker(r, WorkerOptions{Name: "w", Capacity: 2, PollInterval: 10 * time.Second}, func(hctx context.Context, l Lease) error {
			if l.Task.ID == "long" {
				select {
				case <-time.After(time.Hour):
					return nil
				case <-hctx.Done():
					return hctx.Err()
				}
			}
			<-hctx.Done()
			cancelled.Store(true)
			return hctx.Err()
		})
		var runErr error
		doneRun := make(chan struct{})
		go func() { runErr = w.Run(ctx); close(doneRun) }()
		fakeclock.Advance(time.Hour + time.Second)
		for _, d := range r.extend {
			if d != 45*time.Second {
				t.Fatalf("renewed for %v", d)
			}
		}
		if len(r.calls) != 1 || r.calls[0] != "ack" {
			t.Fatalf("calls %v", r.calls)
		}
		cancel()
		fakeclock.Wait()
		<-doneRun
		if !errors.Is(runErr, context.Canceled) || !cancelled.Load() {
			t.Fatalf("run: %v", runErr)
		}
		// stuck was released: visible at once
		if l, err := q.Lease(context.Background(), "other"); err != nil || l.Task.ID != "stuck" {
			t.Fatalf("not released: %v %v", l, err)
		}
	})
}
