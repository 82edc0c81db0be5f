package ambiguous

// Independent probe, written from README.md, the starter's doc comments and
// provider/README.md only. It uses its own in-memory Store and queue.

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

var (
	_ = errors.Is
	_ = fakeclock.Advance
	_ = time.Second
)

type probeStore struct {
	mu        sync.Mutex
	recs      map[string]Record
	failSaves int // fail the next n Saves
	failLoads int // fail the next n Loads
	onSave    func(taskID string, r Record)
}

func newProbeStore() *probeStore { return &probeStore{recs: map[string]Record{}} }

func (s *probeStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLoads > 0 {
		s.failLoads--
		return Record{}, false, errors.New("probe store: load failed (connection reset)")
	}
	r, ok := s.recs[id]
	return r, ok, nil
}

func (s *probeStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	if s.failSaves > 0 {
		s.failSaves--
		s.mu.Unlock()
		return errors.New("probe store: save failed (connection reset)")
	}
	s.recs[id] = r
	hook := s.onSave
	s.mu.Unlock()
	if hook != nil {
		hook(id, r)
	}
	return nil
}

func (s *probeStore) get(id string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[id]
	return r, ok
}

func probeIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("op-%06d", n)
	}
}

type probeQueue struct {
	mu     sync.Mutex
	acks   int
	ackErr error
	onAck  func()
}

func (q *probeQueue) delivery(t Task, attempt int) Delivery {
	return Delivery{Task: t, Attempt: attempt, Ack: func(ctx context.Context) error {
		q.mu.Lock()
		q.acks++
		hook, err := q.onAck, q.ackErr
		q.mu.Unlock()
		if hook != nil {
			hook()
		}
		return err
	}}
}

func (q *probeQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.acks
}

func probeTask(id, doc, to string) Task {
	return Task{ID: id, Account: "acme", DocumentID: doc, Recipient: to, Subject: "Please sign"}
}

func probeKeys(p *provider.Provider) []string {
	var keys []string
	for _, d := range p.AllDeliveries() {
		keys = append(keys, d.Key)
	}
	return keys
}

// README: "Never retry a refusal, with the same key or a new one. Record it,
// acknowledge the delivery, and return an error that wraps the provider's."
func TestProbeMismatchNotRetriedWithNewKey(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		s := newProbeStore()
		q := &probeQueue{}
		// The operation id the worker gets was already used (by a buggy
		// id source) for another request, to bob.
		if _, err := p.Send(context.Background(), "acme", "op-000001", provider.SendRequest{DocumentID: "nda-2", Recipient: "bob@example.com"}); err != nil {
			t.Fatal(err)
		}
		ids := probeIDs()
		task := probeTask("task-1", "contract-7", "ann@example.com")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		err := New(Deps{Provider: p, Store: s, NewID: ids}).Process(ctx, q.delivery(task, 1))

		if got := p.Received("ann@example.com"); got != 0 {
			t.Fatalf("ann received %d requests after a parameter mismatch; the refusal was retried (keys %v)", got, probeKeys(p))
		}
		if !errors.Is(err, provider.ErrParameterMismatch) {
			t.Fatalf("Process = %v, want an error wrapping ErrParameterMismatch", err)
		}
		if r, _ := s.get("task-1"); r.State != Failed || q.count() != 1 {
			t.Fatalf("record = %v, acks = %d; want failed and acknowledged", r, q.count())
		}
	})
}
