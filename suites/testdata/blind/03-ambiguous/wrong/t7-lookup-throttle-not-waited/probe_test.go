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

type probeCall struct {
	op         string
	start, end time.Time
	err        error
}

// callLog records every provider call with its start and end.
type callLog struct {
	provider.API
	mu    sync.Mutex
	calls []probeCall
}

func (l *callLog) add(op string, start time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, probeCall{op, start, time.Now(), err})
}

func (l *callLog) Send(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error) {
	start := time.Now()
	r, err := l.API.Send(ctx, account, key, req)
	l.add("Send", start, err)
	return r, err
}

func (l *callLog) Status(ctx context.Context, account, key string) (provider.Receipt, error) {
	start := time.Now()
	r, err := l.API.Status(ctx, account, key)
	l.add("Status", start, err)
	return r, err
}

func (l *callLog) Find(ctx context.Context, account, reference string) ([]provider.Receipt, error) {
	start := time.Now()
	r, err := l.API.Find(ctx, account, reference)
	l.add("Find", start, err)
	return r, err
}

// The first Send commits and loses its answer; on the redelivery the
// lookup is throttled with a 5s Retry-After. No provider call may follow
// within 5s of that answer.
func TestProbeThrottledLookupIsWaitedOut(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		api := &callLog{API: p}
		s, ids, q := newProbeStore(), &probeIDs{}, &probeQueue{}
		deps := probeDeps(api, s, ids)
		p.Script(provider.LoseResponse().On(provider.OpSend))
		_ = probeProcess(New(deps), q.delivery(probeTask(), 1), time.Second)
		p.Script(provider.Throttle(5 * time.Second).On(provider.OpFind))
		_ = probeProcess(New(deps), q.delivery(probeTask(), 2), 20*time.Second)
		_ = probeProcess(New(deps), q.delivery(probeTask(), 3), 20*time.Second)
		api.mu.Lock()
		defer api.mu.Unlock()
		for i, c := range api.calls {
			ra, ok := provider.RetryAfter(c.err)
			if !ok || i+1 >= len(api.calls) {
				continue
			}
			next := api.calls[i+1]
			if gap := next.start.Sub(c.end); gap < ra {
				t.Errorf("%s throttled (retry after %v), then %s only %v later", c.op, ra, next.op, gap)
			}
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
