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

// README: "Record an outcome only when the provider has given one. A receipt
// means Sent, with the receipt's RequestID." The process dies right after
// its first Save, before the request leaves the process.
func TestProbeNoSentBeforeReceipt(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		s := newProbeStore()
		q := &probeQueue{}
		ids := probeIDs()
		task := probeTask("task-1", "contract-7", "ann@example.com")
		crashCtx, crash := context.WithTimeout(context.Background(), 10*time.Minute)
		s.onSave = func(string, Record) { crash() }
		_ = New(Deps{Provider: p, Store: s, NewID: ids}).Process(crashCtx, q.delivery(task, 1))
		crash()
		s.onSave = nil
		if r, _ := s.get("task-1"); r.State == Sent && p.Received("ann@example.com") == 0 {
			t.Fatalf("record = %v although nothing was sent", r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		_ = New(Deps{Provider: p, Store: s, NewID: ids}).Process(ctx, q.delivery(task, 2))
		if got := p.Received("ann@example.com"); got != 1 {
			t.Fatalf("ann received %d, want 1", got)
		}
	})
}
