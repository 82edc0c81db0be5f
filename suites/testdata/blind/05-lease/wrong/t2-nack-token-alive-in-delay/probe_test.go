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

var _ = errors.Is
var _ sync.Mutex
var _ atomic.Int32
var _ = fakeclock.Now

func pq(t *testing.T, vt time.Duration, ids ...string) *Queue {
	t.Helper()
	q, err := New(Options{VisibilityTimeout: vt})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := q.Enqueue(context.Background(), Task{ID: id, Subject: "orig"}); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

// spy wraps a LeaseQueue: records calls; hooks may replace behaviour.
type spy struct {
	LeaseQueue
	mu      sync.Mutex
	leases  int
	extends []time.Duration
	settled []string
	extendF func(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error)
	ackF    func(ctx context.Context, tok LeaseToken) error
}

func (s *spy) Lease(ctx context.Context, h string) (Lease, error) {
	l, err := s.LeaseQueue.Lease(ctx, h)
	if err == nil {
		s.mu.Lock()
		s.leases++
		s.mu.Unlock()
	}
	return l, err
}
func (s *spy) Extend(ctx context.Context, tok LeaseToken, d time.Duration) (Lease, error) {
	s.mu.Lock()
	s.extends = append(s.extends, d)
	f := s.extendF
	s.mu.Unlock()
	if f != nil {
		return f(ctx, tok, d)
	}
	return s.LeaseQueue.Extend(ctx, tok, d)
}
func (s *spy) Ack(ctx context.Context, tok LeaseToken) error {
	s.mu.Lock()
	s.settled = append(s.settled, "ack "+string(tok))
	f := s.ackF
	s.mu.Unlock()
	if f != nil {
		return f(ctx, tok)
	}
	return s.LeaseQueue.Ack(ctx, tok)
}
func (s *spy) Nack(ctx context.Context, tok LeaseToken, d time.Duration) error {
	s.mu.Lock()
	s.settled = append(s.settled, "nack "+string(tok))
	s.mu.Unlock()
	return s.LeaseQueue.Nack(ctx, tok, d)
}
func (s *spy) snapshot() (int, []time.Duration, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases, append([]time.Duration(nil), s.extends...), append([]string(nil), s.settled...)
}

// runW starts w.Run in the bubble; stop cancels and waits, returning Run's error.
func runW(w *Worker) (stop func() error, done chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	var err error
	go func() { err = w.Run(ctx); close(done) }()
	return func() error { cancel(); <-done; return err }, done
}

func TestProbeNackedTokenDeadDuringDelay(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := pq(t, time.Minute, "a")
		l, _ := q.Lease(ctx, "w1")
		if err := q.Nack(ctx, l.Token, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		fakeclock.Advance(time.Minute)
		if _, err := q.Extend(ctx, l.Token, time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Extend of released token = %v", err)
		}
		if err := q.Ack(ctx, l.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Ack of released token = %v", err)
		}
		fakeclock.Advance(9 * time.Minute)
		if l2, err := q.Lease(ctx, "w2"); err != nil || l2.Attempt != 2 {
			t.Fatalf("task not back after delay: %v %v", l2, err)
		}
	})
}
