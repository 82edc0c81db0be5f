package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.New
var _ = fmt.Sprint
var _ sync.Mutex

func mustQueue(t *testing.T, vt time.Duration, ids ...string) *Queue {
	q, err := New(Options{VisibilityTimeout: vt})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := q.Enqueue(context.Background(), Task{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

// recQueue wraps a LeaseQueue and records the worker's calls.
type recQueue struct {
	LeaseQueue
	mu      sync.Mutex
	leases  int
	extends []time.Duration
	acks    []LeaseToken
	nacks   []LeaseToken
	extend  func(LeaseToken, time.Duration) (Lease, error, bool)
}

func (r *recQueue) Lease(ctx context.Context, h string) (Lease, error) {
	l, err := r.LeaseQueue.Lease(ctx, h)
	if err == nil {
		r.mu.Lock()
		r.leases++
		r.mu.Unlock()
	}
	return l, err
}

func (r *recQueue) Extend(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error) {
	r.mu.Lock()
	r.extends = append(r.extends, d)
	f := r.extend
	r.mu.Unlock()
	if f != nil {
		if l, err, ok := f(tok, d); ok {
			return l, err
		}
	}
	return r.LeaseQueue.Extend(ctx, tok, d)
}

func (r *recQueue) Ack(ctx context.Context, tok LeaseToken) error {
	r.mu.Lock()
	r.acks = append(r.acks, tok)
	r.mu.Unlock()
	return r.LeaseQueue.Ack(ctx, tok)
}

func (r *recQueue) Nack(ctx context.Context, tok LeaseToken, d time.Duration) error {
	r.mu.Lock()
	r.nacks = append(r.nacks, tok)
	r.mu.Unlock()
	return r.LeaseQueue.Nack(ctx, tok, d)
}

func TestProbeRequeuedTaskNewToken(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := mustQueue(t, time.Minute, "t1")
		l1, _ := q.Lease(ctx, "w")
		if err := q.Ack(ctx, l1.Token); err != nil {
			t.Fatal(err)
		}
		q.Enqueue(ctx, Task{ID: "t1"})
		l2, _ := q.Lease(ctx, "w")
		if l2.Attempt != 1 || l2.Token == l1.Token {
			t.Errorf("second life: attempt %d token %q, first token %q", l2.Attempt, l2.Token, l1.Token)
		}
	})
}
