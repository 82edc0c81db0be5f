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

// A Send refused with ErrUnauthorized: the Failed outcome is saved before
// the delivery is acknowledged, and when that Save fails there is no Ack.
func TestProbeRefusalSavedBeforeAck(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{Accounts: []string{"acme"}})
		s, ids, q := newProbeStore(), &probeIDs{}, &probeQueue{}
		deps := probeDeps(p, s, ids)
		tk := probeTask()
		tk.Account = "globex"
		var atAck []Record
		q.onAck = func() { r, _ := s.get(tk.ID); atAck = append(atAck, r) }

		// Delivery 1: the Save of the outcome fails (the first Save, of
		// the operation id, goes through).
		saveFailing := &failSecondSave{probeStore: s}
		err := probeProcess(New(Deps{Provider: p, Store: saveFailing, NewID: ids.next}), q.delivery(tk, 1), time.Second)
		if !errors.Is(err, errProbeBroken) {
			t.Errorf("delivery 1 (outcome Save fails): Process = %v, want an error wrapping the store's", err)
		}
		if len(atAck) != 0 {
			t.Errorf("delivery 1: Ack called although saving the outcome failed (record then: %v)", atAck)
		}

		// Another refused task, on which every call goes through.
		tk = probeTask()
		tk.ID, tk.Account = "task-2", "globex"
		atAck = nil
		err = probeProcess(New(deps), q.delivery(tk, 1), time.Second)
		if !errors.Is(err, provider.ErrUnauthorized) {
			t.Errorf("task-2: Process = %v, want an error wrapping provider.ErrUnauthorized", err)
		}
		if len(atAck) != 1 || atAck[0].State != Failed {
			t.Errorf("records seen at Ack = %v, want exactly one Ack, with the record already failed", atAck)
		}
		if st := p.Stats("globex"); st.Committed != 0 {
			t.Errorf("committed %d, want 0", st.Committed)
		}
	})
}

// failSecondSave fails the second Save it sees, once.
type failSecondSave struct {
	*probeStore
	n int
}

func (f *failSecondSave) Save(ctx context.Context, id string, r Record) error {
	f.n++
	if f.n == 2 {
		return fmt.Errorf("save %q: %w", id, errProbeBroken)
	}
	return f.probeStore.Save(ctx, id, r)
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
