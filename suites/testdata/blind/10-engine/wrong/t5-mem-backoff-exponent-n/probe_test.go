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

// R7
func TestProbeBackoff(t *testing.T) {
	both(t, Options{BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, MaxDeliveries: 100, VisibilityTimeout: time.Hour}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 1))
		for n := 1; n <= 40; n++ {
			l := mustLease(t, b, "w")
			if l.Delivery != n {
				t.Fatalf("delivery %d; want %d", l.Delivery, n)
			}
			e.clk.Advance(3 * time.Millisecond)
			if err := b.Fail(bg, l, fmt.Errorf("fail %d", n)); err != nil {
				t.Fatal(err)
			}
			wait := time.Second
			if n <= 4 {
				wait = 100 * time.Millisecond << (n - 1)
			}
			in := inspect(t, b, "a")
			if want := e.clk.Now().Add(wait); in.State != task.JobQueued || !in.Until.Equal(want) || in.LastError != fmt.Sprintf("fail %d", n) {
				t.Fatalf("after failure %d: %v until %v; want queued until %v", n, in, in.Until, want)
			}
			e.clk.Advance(wait - time.Millisecond)
			noJob(t, b)
			e.clk.Advance(time.Millisecond)
		}
	})
	both(t, Options{MaxDeliveries: 100}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 1))
		for n := 1; n <= 12; n++ {
			l := mustLease(t, e.b, "w")
			if err := e.b.Fail(bg, l, errors.New("x")); err != nil {
				t.Fatal(err)
			}
			wait := 5 * time.Minute
			if n <= 9 {
				wait = time.Second << (n - 1)
			}
			if in := inspect(t, e.b, "a"); !in.Until.Equal(e.clk.Now().Add(wait)) {
				t.Fatalf("default backoff after %d: until %v; want +%v", n, in.Until, wait)
			}
			e.clk.Advance(wait)
		}
	})
	// no overflow: huge MaxBackoff
	both(t, Options{MaxDeliveries: 100, MaxBackoff: 1000 * time.Hour}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 1))
		for n := 1; n <= 45; n++ {
			l := mustLease(t, e.b, "w")
			if err := e.b.Fail(bg, l, errors.New("x")); err != nil {
				t.Fatal(err)
			}
			in := inspect(t, e.b, "a")
			if in.Until.Before(e.clk.Now().Add(time.Second)) {
				t.Fatalf("backoff after %d went backwards: %v", n, in.Until)
			}
			e.clk.Advance(in.Until.Sub(e.clk.Now()))
		}
	})
}
