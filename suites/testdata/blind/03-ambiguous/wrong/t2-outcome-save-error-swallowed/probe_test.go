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

var _ = errors.Is
var _ = fakeclock.Now

type memStore struct {
	mu                 sync.Mutex
	recs               map[string]Record
	failLoad, failSave int
	failSaveState      State // when set, only Saves of this state fail
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
	if s.failSave > 0 && (s.failSaveState == "" || s.failSaveState == r.State) {
		s.failSave--
		return errBroken
	}
	if s.recs == nil {
		s.recs = map[string]Record{}
	}
	s.recs[id] = r
	return nil
}
func (s *memStore) get(id string) Record { s.mu.Lock(); defer s.mu.Unlock(); return s.recs[id] }

// flakyAPI wraps the provider; failFind upcoming Finds fail with a broken connection.
type flakyAPI struct {
	provider.API
	mu       sync.Mutex
	failFind int
	sendAt   []time.Time
}

func (f *flakyAPI) Find(ctx context.Context, acct, ref string) ([]provider.Receipt, error) {
	f.mu.Lock()
	fail := f.failFind > 0
	if fail {
		f.failFind--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("find: connection reset")
	}
	return f.API.Find(ctx, acct, ref)
}
func (f *flakyAPI) Send(ctx context.Context, acct, key string, req provider.SendRequest) (provider.Receipt, error) {
	f.mu.Lock()
	f.sendAt = append(f.sendAt, time.Now())
	f.mu.Unlock()
	return f.API.Send(ctx, acct, key, req)
}

type env struct {
	p     *provider.Provider
	api   *flakyAPI
	store *memStore
	n     int
	acks  int
	onAck func()
}

func newEnv() *env {
	p := provider.New(provider.Options{})
	return &env{p: p, api: &flakyAPI{API: p}, store: &memStore{}}
}
func (e *env) deps() Deps {
	return Deps{Provider: e.api, Store: e.store, NewID: func() string { e.n++; return fmt.Sprintf("op-%06d", e.n) }}
}
func (e *env) deliverCtx(ctx context.Context, t Task) error {
	return New(e.deps()).Process(ctx, Delivery{Task: t, Ack: func(context.Context) error {
		if e.onAck != nil {
			e.onAck()
		}
		e.acks++
		return nil
	}})
}
func (e *env) deliver(t Task, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return e.deliverCtx(ctx, t)
}

var ann = Task{ID: "t1", Account: "acme", DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "sign"}

func TestProbeOutcomeSaveFailure(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		e := newEnv()
		e.store.failSave, e.store.failSaveState = 1, Sent
		err := e.deliver(ann, time.Minute)
		if !errors.Is(err, errBroken) || e.acks != 0 {
			t.Fatalf("Process = %v, acks %d", err, e.acks)
		}
	})
}
