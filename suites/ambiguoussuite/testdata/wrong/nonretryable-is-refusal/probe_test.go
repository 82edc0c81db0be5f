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

// README: "A definite refusal (ErrParameterMismatch, ErrInvalidRequest,
// ErrUnauthorized) means Failed ... Anything else (a timeout, ...) means the
// outcome is not known: the task stays Pending." provider: Ambiguous is true
// for a cancelled context too; "A worker must not record such a Send as
// failed". Here the caller's context is cancelled right after the provider
// commits (the caller gave up): the customer has the request.
func TestProbeCancelledAfterCommitIsNotFailed(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		s := newProbeStore()
		q := &probeQueue{}
		ids := probeIDs()
		task := probeTask("task-1", "contract-7", "ann@example.com")

		ctx1, cancel1 := context.WithCancel(context.Background())
		p.OnCommit(func(provider.Delivery) { cancel1() })
		err := New(Deps{Provider: p, Store: s, NewID: ids}).Process(ctx1, q.delivery(task, 1))
		cancel1()
		p.OnCommit(nil)
		if err == nil {
			t.Fatalf("Process = nil after the context was cancelled without an answer")
		}
		if r, _ := s.get("task-1"); r.State == Failed {
			t.Fatalf("record = %v: the request was committed (ann received %d) but the task is recorded failed", r, p.Received("ann@example.com"))
		}
		if q.count() != 0 {
			t.Fatalf("delivery acknowledged although the outcome was unknown")
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel2()
		if err := New(Deps{Provider: p, Store: s, NewID: ids}).Process(ctx2, q.delivery(task, 2)); err != nil {
			t.Fatalf("redelivery: Process = %v, want nil", err)
		}
		if r, _ := s.get("task-1"); r.State != Sent || r.RequestID == "" {
			t.Fatalf("after redelivery record = %v, want sent", r)
		}
	})
}
