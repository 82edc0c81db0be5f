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

// R4/R13: a restarted process (a new Redis value on the same namespace) goes on granting greater tokens.
func TestProbeRestartedProcessGrantsGreaterTokens(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, rdb := fakeredis.Start(t)
		r1, err := NewRedis(rdb, "ns", Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, r1, job("a", "d1"))
		la := mustLease(t, r1, "w1")
		r2, err := NewRedis(fakeredis.NewClient(t, m), "ns", Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, r2, job("b", "d2"))
		lb := mustLease(t, r2, "w2")
		if lb.Token <= la.Token {
			t.Fatalf("restarted process granted token %d after token %d", lb.Token, la.Token)
		}
	})
}
