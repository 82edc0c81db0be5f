package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
	goredis "github.com/redis/go-redis/v9"
)

// clock is the bubble's clock plus an offset the test moves by hand.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// env is one backend under test.
type env struct {
	name string
	b    Backend
	clk  *clock
	// Redis only:
	mr      *miniredis.Miniredis
	rdb     *goredis.Client
	ns      string
	restart func(o Options) Backend // a new process on the same server/namespace
}

func (e *env) redis() bool { return e.mr != nil }

// both runs f against a memory and a Redis backend made with o (its Now is
// replaced by the env's clock), each in its own bubble.
func both(t *testing.T, o Options, f func(t *testing.T, e *env)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) {
		fakeclock.Run(t, func(t *testing.T) {
			e := &env{name: "memory", clk: &clock{}}
			o := o
			o.Now = e.clk.Now
			m, err := NewMemory(o)
			if err != nil {
				t.Fatalf("NewMemory: %v", err)
			}
			e.b = m
			f(t, e)
		})
	})
	t.Run("redis", func(t *testing.T) {
		fakeclock.Run(t, func(t *testing.T) {
			e := &env{name: "redis", clk: &clock{}, ns: "labkit:test:t5"}
			e.mr, e.rdb = fakeredis.Start(t)
			o := o
			o.Now = e.clk.Now
			r, err := NewRedis(e.rdb, e.ns, o)
			if err != nil {
				t.Fatalf("NewRedis: %v", err)
			}
			e.b = r
			e.restart = func(o Options) Backend {
				o.Now = e.clk.Now
				r, err := NewRedis(fakeredis.NewClient(t, e.mr), e.ns, o)
				if err != nil {
					t.Fatalf("NewRedis: %v", err)
				}
				return r
			}
			f(t, e)
		})
	})
}

func onlyRedis(t *testing.T, o Options, f func(t *testing.T, e *env)) {
	t.Helper()
	fakeclock.Run(t, func(t *testing.T) {
		e := &env{name: "redis", clk: &clock{}, ns: "labkit:test:t5"}
		e.mr, e.rdb = fakeredis.Start(t)
		o := o
		o.Now = e.clk.Now
		r, err := NewRedis(e.rdb, e.ns, o)
		if err != nil {
			t.Fatalf("NewRedis: %v", err)
		}
		e.b = r
		e.restart = func(o Options) Backend {
			o.Now = e.clk.Now
			r, err := NewRedis(fakeredis.NewClient(t, e.mr), e.ns, o)
			if err != nil {
				t.Fatalf("NewRedis: %v", err)
			}
			return r
		}
		f(t, e)
	})
}

var bg = context.Background()

func job(id string, n int) Job {
	j := Job{ID: id, Account: "acct-" + id}
	for i := range n {
		j.Steps = append(j.Steps, Step{
			DocumentID: fmt.Sprintf("%s-doc-%d", id, i),
			Recipient:  fmt.Sprintf("%s-%d@example.com", id, i),
			Subject:    fmt.Sprintf("please sign %d", i),
		})
	}
	return j
}

func mustSubmit(t *testing.T, b Backend, j Job) {
	t.Helper()
	ok, err := b.Submit(bg, j)
	if err != nil || !ok {
		t.Fatalf("Submit(%s) = %v, %v; want true, nil", j.ID, ok, err)
	}
}

func mustLease(t *testing.T, b Backend, w string) Lease {
	t.Helper()
	l, err := b.Lease(bg, w)
	if err != nil {
		t.Fatalf("Lease(%s): %v", w, err)
	}
	return l
}

func noJob(t *testing.T, b Backend) {
	t.Helper()
	l, err := b.Lease(bg, "w-none")
	if !errors.Is(err, ErrNoJob) {
		t.Fatalf("Lease = %v, %v; want ErrNoJob", l, err)
	}
}

func inspect(t *testing.T, b Backend, id string) Info {
	t.Helper()
	in, err := b.Inspect(bg, id)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", id, err)
	}
	return in
}

func sameJob(a, b Job) bool {
	if a.ID != b.ID || a.Account != b.Account || len(a.Steps) != len(b.Steps) {
		return false
	}
	for i := range a.Steps {
		if a.Steps[i] != b.Steps[i] {
			return false
		}
	}
	return true
}

// failHook fails the n-th command processed (1-based) while armed.
type failHook struct {
	armed atomic.Bool
	n     atomic.Int64
	at    int64
	fired atomic.Bool
}

var errInjected = errors.New("injected redis failure")

func (h *failHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *failHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.armed.Load() && h.n.Add(1) == h.at {
			h.fired.Store(true)
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}
func (h *failHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

var _ net.Conn = nil

// newProvider returns a provider and the engine on b.
func newEngine(b Backend) (*provider.Provider, *Engine) {
	p := provider.New(provider.Options{})
	return p, NewEngine(b, p)
}

var _ = task.JobDead

var _ = strings.Contains

// R3
func TestProbeLeaseVisibility(t *testing.T) {
	both(t, Options{VisibilityTimeout: 10 * time.Second}, func(t *testing.T, e *env) {
		b := e.b
		start := e.clk.Now()
		mustSubmit(t, b, job("a", 1))
		e.clk.Advance(time.Millisecond)
		mustSubmit(t, b, job("b", 1))
		l := mustLease(t, b, "w1")
		if l.Job.ID != "a" || l.Worker != "w1" || l.Delivery != 1 || l.Step != 0 {
			t.Fatalf("first lease %v; want a to w1, delivery 1", l)
		}
		if want := start.Add(time.Millisecond + 10*time.Second); !l.Expires.Equal(want) {
			t.Fatalf("Expires %v; want %v", l.Expires, want)
		}
		// a fails: backoff 1s, visible at start+1ms+1s; b visible since start+1ms.
		if err := b.Fail(bg, l, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(2 * time.Second)
		l2 := mustLease(t, b, "w2")
		if l2.Job.ID != "b" {
			t.Fatalf("second lease %v; want b (visible first)", l2)
		}
		e.clk.Advance(time.Millisecond)
		l3 := mustLease(t, b, "w3")
		if l3.Job.ID != "a" || l3.Delivery != 2 {
			t.Fatalf("third lease %v; want a delivery 2", l3)
		}
		noJob(t, b)
		// hidden until Expires exactly
		e.clk.Advance(l2.Expires.Sub(e.clk.Now()) - time.Millisecond)
		noJob(t, b)
		e.clk.Advance(time.Millisecond)
		l4 := mustLease(t, b, "w4")
		if l4.Job.ID != "b" || l4.Delivery != 2 {
			t.Fatalf("at Expires: %v; want b again", l4)
		}
		in := inspect(t, b, "b")
		if in.State != task.JobLeased || !in.Until.Equal(l4.Expires) || in.Token != l4.Token || in.Deliveries != 2 {
			t.Fatalf("Inspect = %v until %v; want leased until %v", in, in.Until, l4.Expires)
		}
	})
	both(t, Options{}, func(t *testing.T, e *env) {
		j := job("c", 2)
		mustSubmit(t, e.b, j)
		j.Steps[0].Recipient = "mutated@x" // copy in
		l := mustLease(t, e.b, "w")
		if l.Job.Steps[0].Recipient != "c-0@example.com" {
			t.Fatalf("stored job shared the caller's slice: %v", l.Job.Steps[0])
		}
		if !l.Expires.Equal(e.clk.Now().Add(30 * time.Second)) {
			t.Fatalf("default Expires %v", l.Expires)
		}
		l.Job.Steps[1].Recipient = "mutated@x" // copy out
		if in := inspect(t, e.b, "c"); in.Job.Steps[1].Recipient != "c-1@example.com" {
			t.Fatalf("lease shared the stored slice: %v", in.Job.Steps[1])
		}
		in := inspect(t, e.b, "c")
		in.Job.Steps[0].Subject = "x"
		if in2 := inspect(t, e.b, "c"); in2.Job.Steps[0].Subject != "please sign 0" {
			t.Fatalf("Inspect shared the stored slice")
		}
	})
}
