package ambiguous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

var (
	_ = errors.Is
	_ = io.EOF
	_ = strings.Repeat
	_ = fakeclock.Now
)

// probeStore is an in-memory durable store whose calls can be made to fail.
type probeStore struct {
	mu       sync.Mutex
	recs     map[string]Record
	saves    []Record
	failLoad int                 // fail the next n Loads
	failSave func(r Record) bool // fail (before it takes effect) a Save it returns true for
}

func newProbeStore() *probeStore { return &probeStore{recs: map[string]Record{}} }

func (s *probeStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failLoad > 0 {
		s.failLoad--
		return Record{}, false, errors.New("probe: load: connection reset")
	}
	r, ok := s.recs[id]
	return r, ok, nil
}

func (s *probeStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSave != nil && s.failSave(r) {
		return errors.New("probe: save: connection reset")
	}
	s.recs[id] = r
	s.saves = append(s.saves, r)
	return nil
}

func (s *probeStore) get(id string) Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[id]
}

// probeCall is one call the worker made to the provider.
type probeCall struct {
	op  provider.Op
	key string
	req provider.SendRequest
	at  time.Time
}

// probeAPI records the worker's provider calls and can fail them before
// they reach the provider.
type probeAPI struct {
	p       *provider.Provider
	mu      sync.Mutex
	calls   []probeCall
	sendErr []error // errors for the next Sends, in order
	findErr []error // errors for the next Finds, in order
}

func (a *probeAPI) log(c probeCall) {
	a.mu.Lock()
	c.at = time.Now()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
}

func (a *probeAPI) pop(l *[]error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(*l) == 0 {
		return nil
	}
	err := (*l)[0]
	*l = (*l)[1:]
	return err
}

func (a *probeAPI) Send(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error) {
	a.log(probeCall{op: provider.OpSend, key: key, req: req})
	if err := a.pop(&a.sendErr); err != nil {
		return provider.Receipt{}, err
	}
	return a.p.Send(ctx, account, key, req)
}

func (a *probeAPI) Status(ctx context.Context, account, key string) (provider.Receipt, error) {
	a.log(probeCall{op: provider.OpStatus, key: key})
	return a.p.Status(ctx, account, key)
}

func (a *probeAPI) Find(ctx context.Context, account, ref string) ([]provider.Receipt, error) {
	a.log(probeCall{op: provider.OpFind, key: ref})
	if err := a.pop(&a.findErr); err != nil {
		return nil, err
	}
	return a.p.Find(ctx, account, ref)
}

func (a *probeAPI) callList() []probeCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]probeCall(nil), a.calls...)
}

type probeEnv struct {
	p      *provider.Provider
	api    *probeAPI
	store  *probeStore
	next   int
	acks   int
	ackErr error
}

func newProbeEnv() *probeEnv {
	p := provider.New(provider.Options{})
	return &probeEnv{p: p, api: &probeAPI{p: p}, store: newProbeStore(), next: 100}
}

func (e *probeEnv) worker() *Worker {
	return New(Deps{Provider: e.api, Store: e.store, NewID: func() string {
		e.next++
		return fmt.Sprintf("op-%d", e.next)
	}})
}

func (e *probeEnv) delivery(t Task, attempt int) Delivery {
	return Delivery{Task: t, Attempt: attempt, Ack: func(context.Context) error {
		e.acks++
		return e.ackErr
	}}
}

func probeTask(id string) Task {
	return Task{ID: id, Account: "acme", DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "sign"}
}

// process runs one delivery with a one-minute deadline.
func (e *probeEnv) process(t Task, attempt int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.worker().Process(ctx, e.delivery(t, attempt))
}

// commitEarlier has the provider commit the task's request under key, as an
// earlier (crashed) process would have, and records it pending in the store.
func (e *probeEnv) commitEarlier(t *testing.T, tk Task, key string) {
	t.Helper()
	_, err := e.p.Send(context.Background(), tk.Account, key, provider.SendRequest{
		DocumentID: tk.DocumentID, Recipient: tk.Recipient, Subject: tk.Subject, Reference: key})
	if err != nil {
		t.Fatal(err)
	}
	e.store.recs[tk.ID] = Record{OperationID: key, State: Pending}
}

func TestProbeSettledAckError(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		e := newProbeEnv()
		tk := probeTask("task-1")
		e.store.recs[tk.ID] = Record{OperationID: "op-1", State: Sent, RequestID: "sr_000001"}
		e.ackErr = errors.New("probe: ack: queue unreachable")
		err := e.process(tk, 3)
		if !errors.Is(err, e.ackErr) {
			t.Fatalf("redelivery of a sent task with a failing Ack: %v; want an error wrapping the Ack's", err)
		}
	})
}
