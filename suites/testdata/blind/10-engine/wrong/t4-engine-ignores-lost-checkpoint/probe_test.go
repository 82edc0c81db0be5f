package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
	"github.com/fourth-outcome/labkit/provider"
	goredis "github.com/redis/go-redis/v9"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = strings.Contains
	_ = provider.New
	_ goredis.UniversalClient
)

// manual is a clock the test moves by hand.
type manual struct {
	mu sync.Mutex
	t  time.Time
}

func newManual() *manual { return &manual{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *manual) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manual) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// each runs f against a memory backend and a Redis backend, each with its
// own manual clock, inside a fakeclock bubble.
func each(t *testing.T, o Options, f func(t *testing.T, b Backend, clk *manual)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) {
		fakeclock.Run(t, func(t *testing.T) {
			clk := newManual()
			o := o
			o.Now = clk.Now
			m, err := NewMemory(o)
			if err != nil {
				t.Fatal(err)
			}
			f(t, m, clk)
		})
	})
	t.Run("redis", func(t *testing.T) {
		fakeclock.Run(t, func(t *testing.T) {
			clk := newManual()
			o := o
			o.Now = clk.Now
			_, rdb := fakeredis.Start(t)
			r, err := NewRedis(rdb, "probe", o)
			if err != nil {
				t.Fatal(err)
			}
			f(t, r, clk)
		})
	})
}

func job(id string, docs ...string) Job {
	j := Job{ID: id, Account: "acct"}
	for _, d := range docs {
		j.Steps = append(j.Steps, Step{DocumentID: d, Recipient: d + "@example.com", Subject: "sign " + d})
	}
	return j
}

func mustSubmit(t *testing.T, b Backend, j Job) {
	t.Helper()
	ok, err := b.Submit(context.Background(), j)
	if err != nil || !ok {
		t.Fatalf("Submit(%s) = %v, %v; want true, nil", j.ID, ok, err)
	}
}

func mustLease(t *testing.T, b Backend, w string) Lease {
	t.Helper()
	l, err := b.Lease(context.Background(), w)
	if err != nil {
		t.Fatalf("Lease(%s): %v", w, err)
	}
	return l
}

func inspect(t *testing.T, b Backend, id string) Info {
	t.Helper()
	i, err := b.Inspect(context.Background(), id)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", id, err)
	}
	return i
}

// lostAfterFirst is a backend whose Checkpoint reports the lease lost.
type lostCheckpoint struct{ Backend }

func (b lostCheckpoint) Checkpoint(ctx context.Context, l Lease, step int) (Lease, error) {
	return Lease{}, fmt.Errorf("taken over: %w", ErrLeaseLost)
}

// R16: when a Checkpoint returns ErrLeaseLost, Work stops at once: no further Send, no Complete.
func TestProbeLostCheckpointStopsWork(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, _ := NewMemory(Options{Now: clk.Now})
		p := provider.New(provider.Options{})
		mustSubmit(t, m, job("a", "d1", "d2"))
		err := NewEngine(lostCheckpoint{m}, p).Work(context.Background(), "w")
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Work = %v, want ErrLeaseLost", err)
		}
		if got := p.Received("d2@example.com"); got != 0 {
			t.Fatalf("step 2 sent %d times after the lease was lost", got)
		}
		if info := inspect(t, m, "a"); info.State != "leased" {
			t.Fatalf("%v: Work must report nothing after losing its lease", info)
		}
	})
}
