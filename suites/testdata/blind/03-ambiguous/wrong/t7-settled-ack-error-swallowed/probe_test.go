package ambiguous

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

// A sent task comes back a day later and its Ack fails: Process must not
// return nil, but an error wrapping the queue's.
func TestProbeLateRedeliveryAckFailureReturned(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		s, ids, q := newProbeStore(), &probeIDs{}, &probeQueue{}
		deps := probeDeps(p, s, ids)
		if err := probeProcess(New(deps), q.delivery(probeTask(), 1), time.Second); err != nil {
			t.Fatalf("delivery 1: Process = %v, want nil", err)
		}
		time.Sleep(25 * time.Hour)
		errQueue := errors.New("queue connection reset")
		q.mu.Lock()
		q.ackErr = errQueue
		q.mu.Unlock()
		if err := probeProcess(New(deps), q.delivery(probeTask(), 2), time.Second); !errors.Is(err, errQueue) {
			t.Errorf("redelivery with a failing Ack: Process = %v, want an error wrapping the Ack's", err)
		}
		if got := p.Received("ann@example.com"); got != 1 {
			t.Errorf("ann received %d, want 1", got)
		}
	})
}

// ---- probe helpers (self-contained) ----

var errProbeBroken = errors.New("probe: connection broken")

// probeStore is an in-memory Store whose next Loads or Saves can fail
// (before taking effect), and that remembers every Save.
type probeStore struct {
	mu       sync.Mutex
	recs     map[string]Record
	failLoad int
	failSave int
	saves    []Record
}

func newProbeStore() *probeStore { return &probeStore{recs: map[string]Record{}} }

func (s *probeStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLoad > 0 {
		s.failLoad--
		return Record{}, false, fmt.Errorf("load %q: %w", id, errProbeBroken)
	}
	r, ok := s.recs[id]
	return r, ok, nil
}

func (s *probeStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSave > 0 {
		s.failSave--
		return fmt.Errorf("save %q: %w", id, errProbeBroken)
	}
	s.recs[id] = r
	s.saves = append(s.saves, r)
	return nil
}

func (s *probeStore) get(id string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[id]
	return r, ok
}

// probeIDs hands out op-000001, op-000002, ... across every process.
type probeIDs struct {
	mu sync.Mutex
	n  int
}

func (g *probeIDs) next() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return fmt.Sprintf("op-%06d", g.n)
}

func probeDeps(api provider.API, s *probeStore, ids *probeIDs) Deps {
	return Deps{Provider: api, Store: s, NewID: ids.next}
}

// probeQueue counts acknowledgements; ackErr, when set, fails the next Ack
// (before it takes effect); onAck runs at the start of every Ack.
type probeQueue struct {
	mu     sync.Mutex
	acks   int
	ackErr error
	onAck  func()
}

func (q *probeQueue) delivery(t Task, attempt int) Delivery {
	return Delivery{Task: t, Attempt: attempt, Ack: func(ctx context.Context) error {
		q.mu.Lock()
		f := q.onAck
		q.mu.Unlock()
		if f != nil {
			f()
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if err := q.ackErr; err != nil {
			q.ackErr = nil
			return err
		}
		q.acks++
		return nil
	}}
}

func (q *probeQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.acks
}

func probeTask() Task {
	return Task{ID: "task-1", Account: "acme", DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "Please sign"}
}

// probeProcess runs one delivery with its own deadline.
func probeProcess(w *Worker, d Delivery, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return w.Process(ctx, d)
}
