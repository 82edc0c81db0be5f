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

type memStore struct {
	mu   sync.Mutex
	recs map[string]Record
	// failLoad/failSave: number of upcoming calls to fail
	failLoad, failSave int
	saves              []Record
}

var errBroken = errors.New("store: connection reset")

func (s *memStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLoad > 0 {
		s.failLoad--
		return Record{}, false, errBroken
	}
	r, ok := s.recs[id]
	return r, ok, nil
}
func (s *memStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSave > 0 {
		s.failSave--
		return errBroken
	}
	if s.recs == nil {
		s.recs = map[string]Record{}
	}
	s.recs[id] = r
	s.saves = append(s.saves, r)
	return nil
}
func (s *memStore) get(id string) Record { s.mu.Lock(); defer s.mu.Unlock(); return s.recs[id] }

type env struct {
	p     *provider.Provider
	store *memStore
	n     int
	acks  int
}

func newEnv() *env { return &env{p: provider.New(provider.Options{}), store: &memStore{}} }
func (e *env) deps() Deps {
	return Deps{Provider: e.p, Store: e.store, NewID: func() string { e.n++; return fmt.Sprintf("op-%06d", e.n) }}
}
func (e *env) deliver(t Task, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return New(e.deps()).Process(ctx, Delivery{Task: t, Ack: func(context.Context) error { e.acks++; return nil }})
}

var ann = Task{ID: "t1", Account: "acme", DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "sign"}

func TestProbeLostResponseThenLateRedelivery(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		e := newEnv()
		e.p.Script(provider.LoseResponse())
		if err := e.deliver(ann, 10*time.Second); err == nil {
			t.Fatal("lost response returned nil")
		}
		if r := e.store.get("t1"); r.State != Pending || e.acks != 0 {
			t.Fatalf("after lost response: %v acks %d", r, e.acks)
		}
		time.Sleep(25 * time.Hour)
		if err := e.deliver(ann, time.Minute); err != nil {
			t.Fatal(err)
		}
		r := e.store.get("t1")
		if r.State != Sent || r.RequestID != "sr_000001" || e.p.Received(ann.Recipient) != 1 || e.acks != 1 {
			t.Fatalf("%v received %d acks %d", r, e.p.Received(ann.Recipient), e.acks)
		}
		if err := e.deliver(ann, time.Minute); err != nil || e.acks != 2 || e.p.Received(ann.Recipient) != 1 {
			t.Fatal("settled redelivery", err)
		}
	})
}

func TestProbeThrottleAndRefusal(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		e := newEnv()
		e.p.Script(provider.Throttle(7 * time.Second))
		start := time.Now()
		if err := e.deliver(ann, time.Minute); err != nil {
			t.Fatal(err)
		}
		if ds := e.p.Deliveries(ann.Recipient); len(ds) != 1 || ds[0].At.Sub(start) < 7*time.Second || ds[0].Key != ds[0].Reference {
			t.Fatalf("%+v", ds)
		}
		bad := Task{ID: "t2", Account: "acme", DocumentID: "d", Recipient: "not-an-email"}
		err := e.deliver(bad, time.Minute)
		if !errors.Is(err, provider.ErrInvalidRequest) || e.store.get("t2").State != Failed || e.acks != 2 {
			t.Fatalf("refusal: %v %v", err, e.store.get("t2"))
		}
		if e.p.Stats("acme").Rejected != 1 {
			t.Fatal("refusal retried")
		}
	})
}
