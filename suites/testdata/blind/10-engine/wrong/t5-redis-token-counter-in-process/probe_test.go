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

// R4
func TestProbeTokens(t *testing.T) {
	both(t, Options{VisibilityTimeout: time.Second}, func(t *testing.T, e *env) {
		b := e.b
		var last Token
		next := func(want string, delivery int) Lease {
			t.Helper()
			l := mustLease(t, b, "w")
			if l.Token <= last || l.Job.ID != want || l.Delivery != delivery {
				t.Fatalf("lease %v after token %d; want %s delivery %d with a greater token", l, last, want, delivery)
			}
			last = l.Token
			return l
		}
		mustSubmit(t, b, job("a", 1))
		mustSubmit(t, b, job("b", 1))
		la := next("a", 1)
		next("b", 1)
		e.clk.Advance(time.Second) // both expire
		next("a", 2)
		lb := next("b", 2)
		if err := b.Fail(bg, lb, errors.New("x")); err != nil {
			t.Fatal(err)
		}
		_ = la
		e.clk.Advance(10 * time.Second)
		next("a", 3)
		next("b", 3)
		if e.redis() {
			b2 := e.restart(Options{VisibilityTimeout: time.Second})
			e.clk.Advance(time.Second)
			l := mustLease(t, b2, "w")
			if l.Token <= last || l.Delivery != 4 {
				t.Fatalf("restarted process: %v after token %d", l, last)
			}
		}
	})
}
