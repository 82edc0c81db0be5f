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

// R1
func TestProbeSubmitIdempotent(t *testing.T) {
	both(t, Options{MaxDeliveries: 2}, func(t *testing.T, e *env) {
		b := e.b
		for _, bad := range []Job{{ID: "", Account: "a", Steps: job("x", 1).Steps}, {ID: "nosteps", Account: "a"}} {
			if ok, err := b.Submit(bg, bad); ok || !errors.Is(err, ErrInvalidJob) {
				t.Fatalf("Submit(invalid %q) = %v, %v; want ErrInvalidJob", bad.ID, ok, err)
			}
		}
		if _, err := b.Inspect(bg, "nosteps"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("Inspect(refused) = %v; want ErrUnknownJob", err)
		}
		j := job("j1", 3)
		mustSubmit(t, b, j)
		check := func(state State) {
			t.Helper()
			if ok, err := b.Submit(bg, job("j1", 3)); ok || err != nil {
				t.Fatalf("duplicate while %s = %v, %v; want false, nil", state, ok, err)
			}
			other := job("j1", 3)
			other.Account = "someone-else"
			if _, err := b.Submit(bg, other); !errors.Is(err, ErrConflict) {
				t.Fatalf("other account while %s: %v; want ErrConflict", state, err)
			}
			swapped := job("j1", 3)
			swapped.Steps[0], swapped.Steps[1] = swapped.Steps[1], swapped.Steps[0]
			if _, err := b.Submit(bg, swapped); !errors.Is(err, ErrConflict) {
				t.Fatalf("steps reordered while %s: %v; want ErrConflict", state, err)
			}
			if _, err := b.Submit(bg, job("j1", 2)); !errors.Is(err, ErrConflict) {
				t.Fatalf("fewer steps while %s: %v; want ErrConflict", state, err)
			}
			in := inspect(t, b, "j1")
			if in.State != state || !sameJob(in.Job, j) {
				t.Fatalf("after duplicates: %v; want %s and the job as submitted", in, state)
			}
		}
		check(task.JobQueued)
		l := mustLease(t, b, "w1")
		check(task.JobLeased)
		if err := b.Complete(bg, l); err != nil {
			t.Fatal(err)
		}
		check(task.JobDone)
		// dead
		mustSubmit(t, b, job("j2", 1))
		l = mustLease(t, b, "w1")
		if err := b.Fail(bg, l, fmt.Errorf("bad: %w", ErrPermanent)); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.Submit(bg, job("j2", 1)); ok || err != nil {
			t.Fatalf("duplicate of a dead job = %v, %v", ok, err)
		}
		if in := inspect(t, b, "j2"); in.State != task.JobDead {
			t.Fatalf("dead job after duplicate: %v", in)
		}
	})
}

// R1, R3, R10: any bytes come back exactly; different bytes conflict.
func TestProbeSubmitBytesExact(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		j := Job{ID: "bin:\xff\x00|x", Account: "acc\xfe:1", Steps: []Step{
			{DocumentID: "d\xff", Recipient: "r@x", Subject: "s\x00\xc3"},
			{DocumentID: "", Recipient: "", Subject: ""},
			{DocumentID: strings.Repeat("long", 5000), Recipient: "a|b", Subject: "2:ab"},
		}}
		mustSubmit(t, e.b, j)
		short := func(j Job) string { s := fmt.Sprintf("%q", j); return s[:min(len(s), 120)] + "..." }
		if in := inspect(t, e.b, j.ID); !sameJob(in.Job, j) {
			t.Fatalf("Inspect job = %s; want %s", short(in.Job), short(j))
		}
		other := j
		other.Steps = append([]Step(nil), j.Steps...)
		other.Steps[0].DocumentID = "d\xfe"
		if _, err := e.b.Submit(bg, other); !errors.Is(err, ErrConflict) {
			t.Fatalf("other invalid byte: %v; want ErrConflict", err)
		}
		l := mustLease(t, e.b, "w")
		if !sameJob(l.Job, j) {
			t.Fatalf("leased job = %s; want %s", short(l.Job), short(j))
		}
	})
}

// R2
func TestProbeCapacity(t *testing.T) {
	both(t, Options{Capacity: 2}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 1))
		mustSubmit(t, b, job("b", 1))
		if ok, err := b.Submit(bg, job("c", 1)); ok || !errors.Is(err, ErrFull) {
			t.Fatalf("third = %v, %v; want ErrFull", ok, err)
		}
		if _, err := b.Inspect(bg, "c"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("Inspect(refused c) = %v; want ErrUnknownJob", err)
		}
		if ok, err := b.Submit(bg, job("a", 1)); ok || err != nil {
			t.Fatalf("duplicate when full = %v, %v; want false, nil", ok, err)
		}
		l := mustLease(t, b, "w")
		if ok, err := b.Submit(bg, job("c", 1)); ok || !errors.Is(err, ErrFull) {
			t.Fatalf("leased still counts: %v, %v; want ErrFull", ok, err)
		}
		if err := b.Complete(bg, l); err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, b, job("c", 1))
		l = mustLease(t, b, "w")
		if err := b.Fail(bg, l, fmt.Errorf("x: %w", ErrPermanent)); err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, b, job("d", 1))
	})
	both(t, Options{}, func(t *testing.T, e *env) {
		for i := range 100 {
			mustSubmit(t, e.b, job(fmt.Sprint("j", i), 1))
		}
		if _, err := e.b.Submit(bg, job("j100", 1)); !errors.Is(err, ErrFull) {
			t.Fatalf("101st: %v; want ErrFull", err)
		}
	})
}

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

// R5
func TestProbeZombie(t *testing.T) {
	both(t, Options{VisibilityTimeout: 10 * time.Second}, func(t *testing.T, e *env) {
		b := e.b
		lost := func(what string, l Lease) {
			t.Helper()
			before := inspect(t, b, l.Job.ID)
			if _, err := b.Checkpoint(bg, l, 1); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("%s: Checkpoint = %v; want ErrLeaseLost", what, err)
			}
			if err := b.Fail(bg, l, errors.New("zombie")); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("%s: Fail = %v; want ErrLeaseLost", what, err)
			}
			if err := b.Complete(bg, l); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("%s: Complete = %v; want ErrLeaseLost", what, err)
			}
			after := inspect(t, b, l.Job.ID)
			if after.String() != before.String() || !after.Until.Equal(before.Until) {
				t.Fatalf("%s changed the job: %v -> %v", what, before, after)
			}
		}
		mustSubmit(t, b, job("a", 2))
		l1 := mustLease(t, b, "w1")
		e.clk.Advance(10 * time.Second) // exactly at Expires
		lost("expired, not re-leased", l1)
		l2 := mustLease(t, b, "w2")
		lost("superseded", l1)
		forged := l2
		forged.Token = l2.Token + 100
		lost("forged", forged)
		if err := b.Complete(bg, l2); err != nil {
			t.Fatal(err)
		}
		lost("second complete", l2)
		mustSubmit(t, b, job("b", 1))
		l3 := mustLease(t, b, "w3")
		if err := b.Fail(bg, l3, errors.New("once")); err != nil {
			t.Fatal(err)
		}
		lost("ended by Fail", l3)
		unknown := l3
		unknown.Job.ID = "never"
		if err := b.Complete(bg, unknown); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("unknown job: %v", err)
		}
	})
}

// R6
func TestProbeCheckpoint(t *testing.T) {
	both(t, Options{VisibilityTimeout: 10 * time.Second}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 3))
		l := mustLease(t, b, "w1")
		e.clk.Advance(9 * time.Second)
		l2, err := b.Checkpoint(bg, l, 2)
		if err != nil {
			t.Fatal(err)
		}
		want := e.clk.Now().Add(10 * time.Second)
		if l2.Step != 2 || l2.Token != l.Token || !l2.Expires.Equal(want) || l2.Delivery != 1 {
			t.Fatalf("Checkpoint = %v expires %v; want step 2, same token, expires %v", l2, l2.Expires, want)
		}
		if in := inspect(t, b, "a"); in.Step != 2 || !in.Until.Equal(want) {
			t.Fatalf("Inspect after checkpoint: %v until %v", in, in.Until)
		}
		e.clk.Advance(5 * time.Second) // past the old expiry, before the new one
		noJob(t, b)
		if _, err := b.Checkpoint(bg, l2, 2); err != nil {
			t.Fatalf("renewed lease lost: %v", err)
		}
		e.clk.Advance(10 * time.Second)
		l3 := mustLease(t, b, "w2")
		if l3.Step != 2 || l3.Delivery != 2 {
			t.Fatalf("next lease %v; want step 2", l3)
		}
	})
}

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

// R8
func TestProbeCrashDeadLetter(t *testing.T) {
	both(t, Options{MaxDeliveries: 3, VisibilityTimeout: time.Second}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 1))
		l := mustLease(t, b, "w")
		if err := b.Fail(bg, l, errors.New("first cause")); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Second)
		mustLease(t, b, "w") // 2, crashes
		e.clk.Advance(time.Second)
		l3 := mustLease(t, b, "w") // 3, crashes
		if l3.Delivery != 3 {
			t.Fatalf("third %v", l3)
		}
		e.clk.Advance(time.Second)
		if in := inspect(t, b, "a"); in.State != task.JobLeased {
			t.Fatalf("before a Lease finds it: %v; want still leased", in)
		}
		mustSubmit(t, b, job("b", 1))
		lb := mustLease(t, b, "w")
		if lb.Job.ID != "b" {
			t.Fatalf("the dead-lettering Lease returned %v; want b", lb)
		}
		in := inspect(t, b, "a")
		if in.State != task.JobDead || in.Reason != task.ReasonMaxDeliveries || in.LastError != "first cause" || in.Deliveries != 3 || !in.Until.IsZero() {
			t.Fatalf("a = %v until %v; want dead, max deliveries, last error kept", in, in.Until)
		}
		e.clk.Advance(time.Hour)
		l4 := mustLease(t, b, "w")
		if l4.Job.ID != "b" {
			t.Fatalf("dead job delivered: %v", l4)
		}
		noJob(t, b)
	})
	both(t, Options{MaxDeliveries: 2}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 1))
		l := mustLease(t, e.b, "w")
		e.b.Fail(bg, l, errors.New("one"))
		e.clk.Advance(time.Hour)
		l = mustLease(t, e.b, "w")
		if err := e.b.Fail(bg, l, errors.New("two")); err != nil {
			t.Fatal(err)
		}
		in := inspect(t, e.b, "a")
		if in.State != task.JobDead || in.Reason != task.ReasonMaxDeliveries || in.LastError != "two" {
			t.Fatalf("after last Fail: %v", in)
		}
		e.clk.Advance(time.Hour)
		noJob(t, e.b)
	})
}

// R9
func TestProbePermanent(t *testing.T) {
	both(t, Options{MaxDeliveries: 2}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 1))
		l := mustLease(t, e.b, "w")
		cause := fmt.Errorf("step 0: %w: bad recipient", ErrPermanent)
		if err := e.b.Fail(bg, l, cause); err != nil {
			t.Fatal(err)
		}
		in := inspect(t, e.b, "a")
		if in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.LastError != cause.Error() || !in.Until.IsZero() {
			t.Fatalf("permanent on first: %v", in)
		}
		mustSubmit(t, e.b, job("b", 1))
		l = mustLease(t, e.b, "w")
		e.b.Fail(bg, l, errors.New("transient"))
		e.clk.Advance(time.Hour)
		l = mustLease(t, e.b, "w")
		if err := e.b.Fail(bg, l, cause); err != nil {
			t.Fatal(err)
		}
		if in := inspect(t, e.b, "b"); in.Reason != task.ReasonPermanent {
			t.Fatalf("permanent on last: %v", in)
		}
		noJob(t, e.b)
	})
}

// R11
func TestProbeOptions(t *testing.T) {
	bad := []Options{
		{Capacity: -1}, {VisibilityTimeout: -1}, {MaxDeliveries: -1}, {BaseBackoff: -1}, {MaxBackoff: -1},
		{VisibilityTimeout: 12*time.Hour + time.Millisecond},
	}
	fakeclock.Run(t, func(t *testing.T) {
		_, rdb := fakeredis.Start(t)
		for _, o := range bad {
			if _, err := NewMemory(o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("NewMemory(%+v) = %v", o, err)
			}
			if _, err := NewRedis(rdb, "ns", o); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("NewRedis(%+v) = %v", o, err)
			}
		}
		if _, err := NewMemory(Options{VisibilityTimeout: 12 * time.Hour}); err != nil {
			t.Errorf("12h: %v", err)
		}
		if _, err := NewRedis(rdb, "ns", Options{VisibilityTimeout: 12 * time.Hour}); err != nil {
			t.Errorf("12h: %v", err)
		}
	})
	both(t, Options{}, func(t *testing.T, e *env) {
		e.clk.Advance(1700 * time.Microsecond)
		mustSubmit(t, e.b, job("a", 1))
		base := fakeclock.Epoch
		if in := inspect(t, e.b, "a"); !in.Until.Equal(base.Add(time.Millisecond)) {
			t.Fatalf("Until %v; want truncated to %v", in.Until, base.Add(time.Millisecond))
		}
		l := mustLease(t, e.b, "w")
		if !l.Expires.Equal(base.Add(time.Millisecond + 30*time.Second)) {
			t.Fatalf("Expires %v; want to the millisecond", l.Expires)
		}
		// Expires is 30.001s; the clock at 30.0015s reads 30.001: the lease has ended.
		e.clk.Advance(30*time.Second - 200*time.Microsecond)
		if _, err := e.b.Checkpoint(bg, l, 0); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("checkpoint at 30.0015s (30.001 to the ms, = Expires): %v; want ErrLeaseLost", err)
		}
	})
	// nil Now
	fakeclock.Run(t, func(t *testing.T) {
		m, err := NewMemory(Options{})
		if err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, m, job("a", 1))
		if in := inspect(t, m, "a"); !in.Until.Equal(time.Now()) {
			t.Fatalf("nil Now: %v", in.Until)
		}
	})
}

// R12
func TestProbeConcurrent(t *testing.T) {
	both(t, Options{Capacity: 5}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 1))
		var wg sync.WaitGroup
		var mu sync.Mutex
		leased := 0
		for i := range 8 {
			wg.Go(func() {
				if _, err := b.Lease(bg, fmt.Sprint("w", i)); err == nil {
					mu.Lock()
					leased++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if leased != 1 {
			t.Fatalf("%d leases of one job", leased)
		}
		trues := 0
		for range 8 {
			wg.Go(func() {
				if ok, err := b.Submit(bg, job("s", 1)); ok && err == nil {
					mu.Lock()
					trues++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if trues != 1 {
			t.Fatalf("%d submissions stored one ID", trues)
		}
		// 2 unfinished, room for 3
		stored := 0
		for i := range 8 {
			wg.Go(func() {
				if ok, _ := b.Submit(bg, job(fmt.Sprint("f", i), 1)); ok {
					mu.Lock()
					stored++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if stored != 3 {
			t.Fatalf("%d stored with room for 3", stored)
		}
	})
	both(t, Options{}, func(t *testing.T, e *env) {
		for round := range 5 {
			id := fmt.Sprint("cf", round)
			mustSubmit(t, e.b, job(id, 1))
			l := mustLease(t, e.b, "w")
			var wg sync.WaitGroup
			var ce, fe error
			wg.Go(func() { ce = e.b.Complete(bg, l) })
			wg.Go(func() { fe = e.b.Fail(bg, l, errors.New("x")) })
			wg.Wait()
			if (ce == nil) == (fe == nil) {
				t.Fatalf("Complete %v, Fail %v; want exactly one winner", ce, fe)
			}
		}
	})
}

// R13
func TestProbeRedisRestartAndNamespaces(t *testing.T) {
	onlyRedis(t, Options{}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 3))
		mustSubmit(t, e.b, job("b", 1))
		l := mustLease(t, e.b, "w")
		l, _ = e.b.Checkpoint(bg, l, 2)
		b2 := e.restart(Options{})
		in := inspect(t, b2, "a")
		if in.Step != 2 || in.Token != l.Token || in.State != task.JobLeased {
			t.Fatalf("restarted sees %v", in)
		}
		if ok, err := b2.Submit(bg, job("a", 3)); ok || err != nil {
			t.Fatalf("restarted duplicate: %v %v", ok, err)
		}
		l2 := mustLease(t, b2, "w2")
		if l2.Job.ID != "b" || l2.Token <= l.Token {
			t.Fatalf("restarted lease %v", l2)
		}
		for _, k := range e.mr.Keys() {
			if !strings.HasPrefix(k, e.ns+":") {
				t.Fatalf("key %q outside the namespace", k)
			}
		}
		other, err := NewRedis(e.rdb, "labkit:test:other", Options{Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		noJob(t, other)
		if _, err := other.Inspect(bg, "a"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("other namespace sees a: %v", err)
		}
		mustSubmit(t, other, job("z", 1))
		lo := mustLease(t, other, "w")
		if lo.Token != 1 {
			t.Fatalf("other namespace token %d; want its own counter", lo.Token)
		}
		if _, err := e.b.Inspect(bg, "z"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("first namespace sees z: %v", err)
		}
	})
}

// R14 on Redis: each command of each operation failed in turn.
func TestProbeRedisErrors(t *testing.T) {
	onlyRedis(t, Options{VisibilityTimeout: time.Minute}, func(t *testing.T, e *env) {
		h := &failHook{}
		e.rdb.AddHook(h)
		mustSubmit(t, e.b, job("a", 2))
		mustSubmit(t, e.b, job("b", 2))
		l := mustLease(t, e.b, "w")
		ops := []struct {
			name string
			f    func() error
		}{
			{"submit", func() error { _, err := e.b.Submit(bg, job("c", 1)); return err }},
			{"submit dup", func() error { _, err := e.b.Submit(bg, job("a", 2)); return err }},
			{"lease", func() error { _, err := e.b.Lease(bg, "w"); return err }},
			{"checkpoint", func() error { _, err := e.b.Checkpoint(bg, l, 1); return err }},
			{"fail", func() error { return e.b.Fail(bg, l, errors.New("x")) }},
			{"complete", func() error { return e.b.Complete(bg, l) }},
			{"inspect", func() error { _, err := e.b.Inspect(bg, "a"); return err }},
		}
		for _, op := range ops {
			for at := int64(1); ; at++ {
				dump := e.mr.Dump()
				h.n.Store(0)
				h.at = at
				h.fired.Store(false)
				h.armed.Store(true)
				err := op.f()
				h.armed.Store(false)
				if !h.fired.Load() {
					break
				}
				if !errors.Is(err, errInjected) {
					t.Fatalf("%s with command %d failed: %v; want the Redis error wrapped", op.name, at, err)
				}
				if d := e.mr.Dump(); d != dump {
					t.Fatalf("%s with command %d failed changed Redis", op.name, at)
				}
			}
		}
		if err := e.rdb.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.b.Lease(bg, "w"); err == nil || errors.Is(err, ErrNoJob) {
			t.Fatalf("Lease on a closed client: %v", err)
		}
		if _, err := e.b.Inspect(bg, "zz"); err == nil || errors.Is(err, ErrUnknownJob) {
			t.Fatalf("Inspect on a closed client: %v", err)
		}
		if ok, err := e.b.Submit(bg, job("q", 1)); ok || err == nil {
			t.Fatalf("Submit on a closed client: %v %v", ok, err)
		}
	})
}

// R14: done contexts.
func TestProbeCancelled(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		b := e.b
		mustSubmit(t, b, job("a", 2))
		l := mustLease(t, b, "w")
		mustSubmit(t, b, job("b", 2))
		ctx, cancel := context.WithCancel(bg)
		cancel()
		before := inspect(t, b, "a").String() + inspect(t, b, "b").String()
		if _, err := b.Submit(ctx, job("c", 1)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Submit: %v", err)
		}
		if _, err := b.Lease(ctx, "w"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lease: %v", err)
		}
		if _, err := b.Checkpoint(ctx, l, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Checkpoint: %v", err)
		}
		if err := b.Fail(ctx, l, errors.New("x")); !errors.Is(err, context.Canceled) {
			t.Fatalf("Fail: %v", err)
		}
		if err := b.Complete(ctx, l); !errors.Is(err, context.Canceled) {
			t.Fatalf("Complete: %v", err)
		}
		if _, err := b.Inspect(ctx, "a"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Inspect: %v", err)
		}
		if _, err := b.Inspect(bg, "c"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("c stored: %v", err)
		}
		if after := inspect(t, b, "a").String() + inspect(t, b, "b").String(); after != before {
			t.Fatalf("changed: %s -> %s", before, after)
		}
		// Work with a done context reports nothing.
		_, eng := newEngine(b)
		if err := eng.Work(ctx, "w2"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Work: %v", err)
		}
	})
}

// R16: Work cancelled after a Send committed reports nothing.
func TestProbeWorkCancelledMidway(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 3))
		p, eng := newEngine(e.b)
		ctx, cancel := context.WithCancel(bg)
		n := 0
		p.OnCommit(func(provider.Delivery) {
			n++
			if n == 2 {
				cancel()
			}
		})
		if err := eng.Work(ctx, "w"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Work = %v; want context.Canceled", err)
		}
		in := inspect(t, e.b, "a")
		if in.State != task.JobLeased || in.Step != 1 || in.LastError != "" {
			t.Fatalf("after cancel: %v; want leased at step 1, nothing reported", in)
		}
		p.OnCommit(nil)
		e.clk.Advance(31 * time.Second)
		if err := eng.Work(bg, "w2"); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if got := p.Received(fmt.Sprintf("a-%d@example.com", i)); got != 1 {
				t.Fatalf("step %d received %d", i, got)
			}
		}
	})
}

// R15
func TestProbeWorkOrderAndKeys(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		j1 := job("x", 3)
		j2 := job("y", 3)
		j2.Steps = append([]Step(nil), j1.Steps...) // same documents, another job
		j2.Account = j1.Account
		mustSubmit(t, e.b, j1)
		mustSubmit(t, e.b, j2)
		for range 2 {
			if err := eng.Work(bg, "w"); err != nil {
				t.Fatal(err)
			}
		}
		if err := eng.Work(bg, "w"); !errors.Is(err, ErrNoJob) {
			t.Fatalf("Work with nothing: %v; want ErrNoJob", err)
		}
		all := p.AllDeliveries()
		if len(all) != 6 {
			t.Fatalf("%d deliveries; want 6", len(all))
		}
		keys := map[string]bool{}
		for i, d := range all {
			if d.DocumentID != j1.Steps[i%3].DocumentID || d.Account != j1.Account {
				t.Fatalf("delivery %d = %+v", i, d)
			}
			keys[d.Key] = true
		}
		if len(keys) != 6 {
			t.Fatalf("keys %v; want 6 distinct", keys)
		}
		for _, id := range []string{"x", "y"} {
			if in := inspect(t, e.b, id); in.State != task.JobDone || in.Step != 3 {
				t.Fatalf("%s: %v", id, in)
			}
		}
	})
}

// R15: keys for IDs that are long, or that would collide when concatenated.
func TestProbeWorkKeysTricky(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		a := job("a1", 1)
		b := job("a", 11)
		b.Steps[10].Recipient = "b10@example.com"
		a.Steps[0].Recipient = "a1@example.com"
		long := job(strings.Repeat("L", 300), 1)
		long.Steps[0].Recipient = "long@example.com"
		ctrl := job("tab\tid ", 1)
		ctrl.Account = "acct-ctrl"
		ctrl.Steps[0].Recipient = "ctrl@example.com"
		for _, j := range []Job{a, b, long, ctrl} {
			mustSubmit(t, e.b, j)
		}
		for range 4 {
			if err := eng.Work(bg, "w"); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []string{"a1@example.com", "b10@example.com", "long@example.com", "ctrl@example.com"} {
			if got := p.Received(r); got != 1 {
				t.Fatalf("%s received %d; want 1", r, got)
			}
		}
	})
}

// R15, R16: a lost reply and an outage, then one delivery.
func TestProbeLostReply(t *testing.T) {
	both(t, Options{VisibilityTimeout: time.Minute}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		mustSubmit(t, e.b, job("a", 2))
		p.Script(provider.LoseResponse())
		if err := eng.Work(bg, "w"); err != nil {
			t.Fatalf("Work with a lost reply: %v", err)
		}
		in := inspect(t, e.b, "a")
		if in.State != task.JobQueued || in.LastError == "" || in.Step != 0 {
			t.Fatalf("after the lost reply: %v", in)
		}
		p.Outage(time.Now(), time.Now().Add(time.Second))
		e.clk.Advance(time.Second)
		if err := eng.Work(bg, "w"); err != nil {
			t.Fatal(err)
		}
		if in := inspect(t, e.b, "a"); in.State != task.JobQueued || !strings.Contains(in.LastError, "unavailable") {
			t.Fatalf("after the outage: %v", in)
		}
		time.Sleep(time.Second)
		e.clk.Advance(2 * time.Second)
		if err := eng.Work(bg, "w"); err != nil {
			t.Fatal(err)
		}
		if in := inspect(t, e.b, "a"); in.State != task.JobDone {
			t.Fatalf("after the retry: %v", in)
		}
		for i := range 2 {
			if got := p.Received(fmt.Sprintf("a-%d@example.com", i)); got != 1 {
				t.Fatalf("step %d received %d", i, got)
			}
		}
	})
}

// R15: a crashed worker resumes from the checkpoint.
func TestProbeResume(t *testing.T) {
	both(t, Options{VisibilityTimeout: time.Minute}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 3))
		l := mustLease(t, e.b, "w1")
		if _, err := e.b.Checkpoint(bg, l, 2); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
		p, eng := newEngine(e.b)
		if err := eng.Work(bg, "w2"); err != nil {
			t.Fatal(err)
		}
		all := p.AllDeliveries()
		if len(all) != 1 || all[0].DocumentID != "a-doc-2" {
			t.Fatalf("deliveries %+v; want only step 2", all)
		}
		// All steps done, crash before Complete: the next Work just completes.
		mustSubmit(t, e.b, job("b", 1))
		l = mustLease(t, e.b, "w1")
		e.b.Checkpoint(bg, l, 1)
		e.clk.Advance(time.Minute)
		if err := eng.Work(bg, "w2"); err != nil {
			t.Fatal(err)
		}
		if in := inspect(t, e.b, "b"); in.State != task.JobDone || p.Received("b-0@example.com") != 0 {
			t.Fatalf("b: %v", in)
		}
	})
}

// R16: permanent errors fail for good; a lost lease stops the work.
func TestProbeStops(t *testing.T) {
	both(t, Options{VisibilityTimeout: time.Minute}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		j := job("a", 3)
		j.Steps[1].Recipient = "not-an-email"
		mustSubmit(t, e.b, j)
		if err := eng.Work(bg, "w"); err != nil {
			t.Fatal(err)
		}
		in := inspect(t, e.b, "a")
		if in.State != task.JobDead || in.Reason != task.ReasonPermanent || in.Step != 1 || !strings.Contains(in.LastError, "not-an-email") {
			t.Fatalf("invalid recipient: %v", in)
		}
		if len(p.AllDeliveries()) != 1 {
			t.Fatalf("deliveries: %d", len(p.AllDeliveries()))
		}
		// stalled worker: its lease is taken over during its first Send.
		mustSubmit(t, e.b, job("b", 3))
		p.OnCommit(func(d provider.Delivery) {
			if d.Recipient == "b-0@example.com" {
				e.clk.Advance(time.Minute)
				if _, err := e.b.Lease(bg, "w2"); err != nil {
					t.Errorf("takeover: %v", err)
				}
			}
		})
		if err := eng.Work(bg, "w1"); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("stalled Work = %v; want ErrLeaseLost", err)
		}
		if p.Received("b-1@example.com") != 0 {
			t.Fatalf("stalled worker sent on")
		}
		if in := inspect(t, e.b, "b"); in.State != task.JobLeased || in.Step != 0 || in.Deliveries != 2 {
			t.Fatalf("b after the stall: %v", in)
		}
	})
}

// R17: a small seeded chaos run.
func TestProbeChaos(t *testing.T) {
	both(t, Options{VisibilityTimeout: 2 * time.Minute, MaxDeliveries: 8, BaseBackoff: time.Second, MaxBackoff: 10 * time.Second}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		p.SetChaos(provider.Chaos{Seed: 7, FailBeforeCommit: 0.15, LoseResponse: 0.15})
		const n = 6
		for i := range n {
			j := job(fmt.Sprint("c", i), 3)
			if i == 5 {
				j.Steps[2].Recipient = "bad"
			}
			mustSubmit(t, e.b, j)
			if ok, err := e.b.Submit(bg, j); ok || err != nil {
				t.Fatalf("resubmission: %v %v", ok, err)
			}
		}
		for range 200 {
			err := eng.Work(bg, "w")
			if errors.Is(err, ErrNoJob) {
				e.clk.Advance(time.Second)
				time.Sleep(time.Second)
				continue
			}
		}
		for i := range n {
			id := fmt.Sprint("c", i)
			in := inspect(t, e.b, id)
			if in.State != task.JobDone && in.State != task.JobDead {
				t.Fatalf("%s unfinished: %v", id, in)
			}
			for s := range 3 {
				if got := p.Received(fmt.Sprintf("%s-%d@example.com", id, s)); got > 1 {
					t.Fatalf("%s step %d received %d", id, s, got)
				} else if in.State == task.JobDone && got != 1 {
					t.Fatalf("%s done but step %d received %d", id, s, got)
				}
			}
		}
	})
}

var _ = task.JobDone

// R12: reads are atomic too (run under -race).
func TestProbeConcurrentReads(t *testing.T) {
	both(t, Options{VisibilityTimeout: time.Minute}, func(t *testing.T, e *env) {
		mustSubmit(t, e.b, job("a", 3))
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 20 {
				e.b.Inspect(bg, "a")
			}
		})
		wg.Go(func() {
			l, err := e.b.Lease(bg, "w")
			if err != nil {
				t.Errorf("Lease: %v", err)
				return
			}
			for i := range 3 {
				if l, err = e.b.Checkpoint(bg, l, i+1); err != nil {
					t.Errorf("Checkpoint: %v", err)
					return
				}
			}
			if err := e.b.Complete(bg, l); err != nil {
				t.Errorf("Complete: %v", err)
			}
		})
		wg.Wait()
		if in := inspect(t, e.b, "a"); in.State != task.JobDone || in.Step != 3 {
			t.Fatalf("%v", in)
		}
	})
}

// R15: job "a1" step 0 and job "a" step 10 must not share a key.
func TestProbeWorkKeysNoCollision(t *testing.T) {
	both(t, Options{}, func(t *testing.T, e *env) {
		p, eng := newEngine(e.b)
		a := job("a1", 1)
		b := job("a", 11)
		b.Account = a.Account
		a.Steps[0] = Step{DocumentID: "same-doc", Recipient: "a1@example.com", Subject: "s"}
		b.Steps[10] = Step{DocumentID: "same-doc", Recipient: "b10@example.com", Subject: "s"}
		mustSubmit(t, e.b, a)
		mustSubmit(t, e.b, b)
		for range 2 {
			if err := eng.Work(bg, "w"); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []string{"a1@example.com", "b10@example.com"} {
			if got := p.Received(r); got != 1 {
				t.Fatalf("%s received %d; want 1 (keys %v)", r, got, p.AllDeliveries())
			}
		}
	})
}
