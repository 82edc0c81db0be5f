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
	mu sync.Mutex
	m  map[string]Record
}

func (s *memStore) Load(ctx context.Context, id string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[id]
	return r, ok, nil
}

func (s *memStore) Save(ctx context.Context, id string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = r
	return nil
}

func TestProbeCorrectScenarios(t *testing.T) {
	tk := Task{ID: "task-1", Account: "acme", DocumentID: "c7", Recipient: "ann@example.com"}
	for _, sc := range []struct {
		name  string
		setup func(p *provider.Provider)
		pause time.Duration
	}{
		{"lost-response", func(p *provider.Provider) { p.Script(provider.LoseResponse()) }, 0},
		{"lost-response-25h", func(p *provider.Provider) { p.Script(provider.LoseResponse()) }, 25 * time.Hour},
		{"fail-throttle-fail", func(p *provider.Provider) {
			p.Script(provider.FailBeforeCommit(), provider.Throttle(3*time.Second), provider.FailBeforeCommit())
		}, 0},
	} {
		t.Run(sc.name, func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				p := provider.New(provider.Options{})
				st := &memStore{m: map[string]Record{}}
				n := 0
				deps := Deps{Provider: p, Store: st, NewID: func() string { n++; return fmt.Sprint("op-", n) }}
				sc.setup(p)
				acks := 0
				d := Delivery{Task: tk, Ack: func(context.Context) error { acks++; return nil }}
				for i := 0; i < 3; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					err := New(deps).Process(ctx, d)
					cancel()
					if err == nil {
						break
					}
					time.Sleep(sc.pause)
				}
				r := st.m[tk.ID]
				if p.Received(tk.Recipient) != 1 || r.State != Sent || r.RequestID == "" || acks != 1 {
					t.Fatalf("received %d, record %v, acks %d", p.Received(tk.Recipient), r, acks)
				}
			})
		})
	}
}

func TestProbeCorrectRefusal(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := provider.New(provider.Options{})
		st := &memStore{m: map[string]Record{}}
		deps := Deps{Provider: p, Store: st, NewID: func() string { return "op-1" }}
		tk := Task{ID: "task-1", Account: "acme", DocumentID: "c7", Recipient: "not-an-email"}
		acks := 0
		err := New(deps).Process(context.Background(), Delivery{Task: tk, Ack: func(context.Context) error { acks++; return nil }})
		if !errors.Is(err, provider.ErrInvalidRequest) || st.m[tk.ID].State != Failed || acks != 1 || p.Stats("acme").Rejected != 1 {
			t.Fatal(err, st.m[tk.ID], acks)
		}
	})
}
