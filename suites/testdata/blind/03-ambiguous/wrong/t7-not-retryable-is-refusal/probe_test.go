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

// The delivery's context is cancelled at the instant the provider commits
// (a crash there): the Send's error wraps context.Canceled, which is no
// answer. The task stays Pending, unacknowledged, and the next delivery
// records it sent, once.
func TestProbeCancelAtCommitIsNoAnswer(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		s, ids, q := newProbeStore(), &probeIDs{}, &probeQueue{}
		deps := probeDeps(p, s, ids)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		p.OnCommit(func(provider.Delivery) { cancel() })
		if err := New(deps).Process(ctx, q.delivery(probeTask(), 1)); err == nil {
			t.Errorf("delivery 1, cancelled at the commit: Process = nil, want an error")
		}
		cancel()
		p.OnCommit(nil)
		if r, _ := s.get("task-1"); r.State != Pending {
			t.Errorf("record after a cancelled Send = %v, want pending", r)
		}
		if n := q.count(); n != 0 {
			t.Errorf("acks after a cancelled Send = %d, want 0", n)
		}
		if err := probeProcess(New(deps), q.delivery(probeTask(), 2), time.Second); err != nil {
			t.Errorf("delivery 2: Process = %v, want nil", err)
		}
		if r, _ := s.get("task-1"); r.State != Sent {
			t.Errorf("final record = %v, want sent", r)
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
