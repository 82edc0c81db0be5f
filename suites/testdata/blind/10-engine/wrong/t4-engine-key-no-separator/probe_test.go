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

// R15: the step key is different for every other step and every other job.
func TestProbeStepKeysDoNotCollideAcrossJobs(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, _ := NewMemory(Options{Now: clk.Now})
		p := provider.New(provider.Options{})
		var docs []string
		for i := range 11 {
			docs = append(docs, fmt.Sprintf("x-doc%d", i))
		}
		mustSubmit(t, m, job("x", docs...))
		clk.Add(time.Millisecond)
		mustSubmit(t, m, job("x1", "other"))
		e := NewEngine(m, p)
		for range 2 {
			if err := e.Work(context.Background(), "w"); err != nil {
				t.Fatalf("Work: %v", err)
			}
		}
		for _, id := range []string{"x", "x1"} {
			if info := inspect(t, m, id); info.State != "done" {
				t.Fatalf("%s: %v, want done", id, info)
			}
		}
		if got := p.Received("other@example.com"); got != 1 {
			t.Fatalf("other@example.com received %d, want 1", got)
		}
	})
}
