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

func TestProbeShutdownReleases(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := pq(t, time.Hour, "a")
		w := NewWorker(q, WorkerOptions{Name: "w", PollInterval: time.Hour}, func(ctx context.Context, l Lease) error {
			<-ctx.Done()
			return ctx.Err()
		})
		stop, _ := runW(w)
		fakeclock.Advance(time.Second)
		err := stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
		if l, err := q.Lease(context.Background(), "other"); err != nil || l.Attempt != 2 {
			t.Fatalf("task not released on shutdown: %v %v", l, err)
		}
	})
}
