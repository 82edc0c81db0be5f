package lease

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// spy wraps the package's own queue, records the worker's calls and lets a
// probe change an answer.
type spy struct {
	q *Queue

	mu       sync.Mutex
	leases   []Lease
	leasedAt []time.Time
	extends  []time.Duration
	extendAt []time.Time
	acks     int
	nacks    int
	delays   []time.Duration

	extendHook func(n int) (Lease, error, bool) // n counts from 1
	ackHook    func(n int) (error, bool)
}

func (s *spy) Lease(ctx context.Context, holder string) (Lease, error) {
	l, err := s.q.Lease(ctx, holder)
	if err == nil {
		s.mu.Lock()
		s.leases = append(s.leases, l)
		s.leasedAt = append(s.leasedAt, time.Now())
		s.mu.Unlock()
	}
	return l, err
}

func (s *spy) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	s.mu.Lock()
	s.extends = append(s.extends, d)
	s.extendAt = append(s.extendAt, time.Now())
	n := len(s.extends)
	hook := s.extendHook
	s.mu.Unlock()
	if hook != nil {
		if l, err, ok := hook(n); ok {
			return l, err
		}
	}
	return s.q.Extend(ctx, token, d)
}

func (s *spy) Ack(ctx context.Context, token LeaseToken) error {
	s.mu.Lock()
	s.acks++
	n := s.acks
	hook := s.ackHook
	s.mu.Unlock()
	if hook != nil {
		if err, ok := hook(n); ok {
			return err
		}
	}
	return s.q.Ack(ctx, token)
}

func (s *spy) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	s.mu.Lock()
	s.nacks++
	s.delays = append(s.delays, delay)
	s.mu.Unlock()
	return s.q.Nack(ctx, token, delay)
}

func (s *spy) counts() (leases, extends, acks, nacks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.leases), len(s.extends), s.acks, s.nacks
}

func newSpy(t *testing.T, timeout time.Duration, ids ...string) *spy {
	q, err := New(Options{VisibilityTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := q.Enqueue(context.Background(), Task{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	return &spy{q: q}
}

// start runs w in a goroutine; stop cancels it and returns Run's error.
func start(w *Worker) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	return func() error { cancel(); return <-errc }
}

// Capacity 1: while its one handler works, the worker holds one lease only.
func TestProbeNoLeaseWithoutSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSpy(t, time.Hour, "a", "b")
		release := make(chan struct{})
		w := NewWorker(s, WorkerOptions{Name: "w1", Capacity: 1}, func(ctx context.Context, l Lease) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
		stop := start(w)
		synctest.Wait()
		leases, _, _, _ := s.counts()
		close(release)
		synctest.Wait()
		stop()
		if leases != 1 {
			t.Fatalf("%d leases held while one handler worked, want 1", leases)
		}
	})
}
