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

var _ = errors.New
var _ = time.Second

// memStore is a durable store; failSave/failLoad, when set, decide per call
// whether to fail it (before it takes effect).
type memStore struct {
	mu       sync.Mutex
	m        map[string]Record
	saves    []Record
	failSave func(Record) bool
	failLoad func() bool
}

var errStore = errors.New("probe: store connection broken")
var errAck = errors.New("probe: queue connection broken")

func newStore() *memStore { return &memStore{m: map[string]Record{}} }

func (s *memStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLoad != nil && s.failLoad() {
		return Record{}, false, errStore
	}
	r, ok := s.m[id]
	return r, ok, nil
}

func (s *memStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSave != nil && s.failSave(r) {
		return errStore
	}
	s.m[id] = r
	s.saves = append(s.saves, r)
	return nil
}

func (s *memStore) get(id string) Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

type env struct {
	p     *provider.Provider
	api   provider.API
	store *memStore
	n     int
	acks  int
	ackFn func() error
}

func newEnv() *env {
	p := provider.New(provider.Options{})
	return &env{p: p, api: p, store: newStore()}
}

func (e *env) worker() *Worker {
	return New(Deps{Provider: e.api, Store: e.store, NewID: func() string { e.n++; return fmt.Sprintf("op-%06d", e.n) }})
}

func (e *env) delivery(t Task, attempt int) Delivery {
	return Delivery{Task: t, Attempt: attempt, Ack: func(ctx context.Context) error {
		if e.ackFn != nil {
			if err := e.ackFn(); err != nil {
				return err
			}
		}
		e.acks++
		return nil
	}}
}

func (e *env) process(t Task, attempt int, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return e.worker().Process(ctx, e.delivery(t, attempt))
}

var task1 = Task{ID: "task-1", Account: "acme", DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "sign"}

// apiWrap lets a probe intercept provider calls.
type apiWrap struct {
	provider.API
	send  func(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error, bool)
	find  func() (error, bool)
	calls []time.Time
}

func (a *apiWrap) Send(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error) {
	a.calls = append(a.calls, time.Now())
	if a.send != nil {
		if r, err, ok := a.send(ctx, account, key, req); ok {
			return r, err
		}
	}
	return a.API.Send(ctx, account, key, req)
}

func (a *apiWrap) Status(ctx context.Context, account, key string) (provider.Receipt, error) {
	a.calls = append(a.calls, time.Now())
	return a.API.Status(ctx, account, key)
}

func (a *apiWrap) Find(ctx context.Context, account, ref string) ([]provider.Receipt, error) {
	a.calls = append(a.calls, time.Now())
	if a.find != nil {
		if err, ok := a.find(); ok {
			return nil, err
		}
	}
	return a.API.Find(ctx, account, ref)
}

func TestProbeFailedLoadIsNotNoRecord(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		e := newEnv()
		e.p.Script(provider.LoseResponse())
		e.process(task1, 1, time.Minute)
		failed := false
		e.store.failLoad = func() bool {
			if !failed {
				failed = true
				return true
			}
			return false
		}
		e.process(task1, 2, time.Minute)
		e.process(task1, 3, time.Minute)
		if got := e.p.Received(task1.Recipient); got != 1 {
			t.Errorf("Received = %d, want 1", got)
		}
		for _, s := range e.store.saves {
			if s.OperationID != "op-000001" {
				t.Errorf("operation id replaced: %v", s)
			}
		}
	})
}
