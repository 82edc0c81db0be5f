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

// R7: backoff min(MaxBackoff, BaseBackoff*2^(n-1)), without overflowing at large n.
func TestProbeBackoffCappedAtLargeN(t *testing.T) {
	each(t, Options{MaxDeliveries: 100}, func(t *testing.T, b Backend, clk *manual) {
		ctx := context.Background()
		mustSubmit(t, b, job("a", "d1"))
		for n := 1; n <= 45; n++ {
			l := mustLease(t, b, "w")
			if l.Delivery != n {
				t.Fatalf("delivery %d, want %d", l.Delivery, n)
			}
			now := clk.Now()
			if err := b.Fail(ctx, l, errors.New("flaky")); err != nil {
				t.Fatalf("Fail #%d: %v", n, err)
			}
			want := min(time.Second<<min(n-1, 20), 5*time.Minute)
			info := inspect(t, b, "a")
			if got := info.Until.Sub(now); got != want {
				t.Fatalf("after failed delivery %d: visible %v after now, want %v", n, got, want)
			}
			clk.Add(want)
		}
	})
}

// R1: the same ID with other steps is ErrConflict.
func TestProbeConflictOnShiftedFields(t *testing.T) {
	each(t, Options{}, func(t *testing.T, b Backend, clk *manual) {
		j1 := Job{ID: "a", Account: "acct", Steps: []Step{{DocumentID: "doc", Recipient: "1@x.io", Subject: "s"}}}
		j2 := Job{ID: "a", Account: "acct", Steps: []Step{{DocumentID: "doc1", Recipient: "@x.io", Subject: "s"}}}
		mustSubmit(t, b, j1)
		ok, err := b.Submit(context.Background(), j2)
		if ok || !errors.Is(err, ErrConflict) {
			t.Fatalf("Submit with other steps = %v, %v; want ErrConflict", ok, err)
		}
	})
}

// R8: the Lease that dead-letters a job whose last lease ended goes on to the next job.
func TestProbeDeadLetteringLeaseGoesOn(t *testing.T) {
	each(t, Options{MaxDeliveries: 1, VisibilityTimeout: time.Minute}, func(t *testing.T, b Backend, clk *manual) {
		mustSubmit(t, b, job("a", "d1"))
		mustLease(t, b, "w1")                   // crashes
		clk.Add(time.Minute + time.Millisecond) // a is visible again (and on its last delivery) before b is submitted
		mustSubmit(t, b, job("b", "d2"))
		l, err := b.Lease(context.Background(), "w2")
		if err != nil || l.Job.ID != "b" {
			t.Fatalf("Lease = %v, %v; want job b (a is dead-lettered on the way)", l, err)
		}
		if info := inspect(t, b, "a"); info.State != "dead" {
			t.Fatalf("a: %v, want dead", info)
		}
	})
}

// R16: a lost reply (ErrTimeout, wrapping DeadlineExceeded from the provider) while the
// caller's ctx is alive fails the job for a retry; Work returns nil.
func TestProbeLostReplyIsRetriedNotAbandoned(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, _ := NewMemory(Options{Now: clk.Now, VisibilityTimeout: time.Hour})
		p := provider.New(provider.Options{ResponseTimeout: 5 * time.Second})
		mustSubmit(t, m, job("a", "d1"))
		p.Script(provider.LoseResponse())
		e := NewEngine(m, p)
		if err := e.Work(context.Background(), "w1"); err != nil {
			t.Fatalf("Work with a lost reply = %v, want nil (job failed for a retry)", err)
		}
		info := inspect(t, m, "a")
		if info.State != "queued" || info.LastError == "" {
			t.Fatalf("after a lost reply: %v; want queued with a last error", info)
		}
		clk.Add(time.Second)
		if err := e.Work(context.Background(), "w2"); err != nil {
			t.Fatalf("second Work: %v", err)
		}
		if info := inspect(t, m, "a"); info.State != "done" || p.Received("d1@example.com") != 1 {
			t.Fatalf("%v, received %d; want done, 1", info, p.Received("d1@example.com"))
		}
	})
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

// R15/R17: two jobs with the same documents get different keys; each job's steps are delivered.
func TestProbeSameDocumentsTwoJobs(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, _ := NewMemory(Options{Now: clk.Now})
		p := provider.New(provider.Options{})
		mustSubmit(t, m, job("j1", "d1"))
		clk.Add(time.Millisecond)
		mustSubmit(t, m, job("j2", "d1"))
		e := NewEngine(m, p)
		for range 2 {
			if err := e.Work(context.Background(), "w"); err != nil {
				t.Fatalf("Work: %v", err)
			}
		}
		if got := p.Received("d1@example.com"); got != 2 {
			t.Fatalf("d1 received %d times for two jobs, want 2", got)
		}
	})
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

// R16/R9: a non-retryable Send error fails the job with a cause wrapping ErrPermanent: dead at once.
func TestProbeInvalidRecipientDeadLettersAtOnce(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		m, _ := NewMemory(Options{Now: clk.Now})
		p := provider.New(provider.Options{})
		j := job("a", "d1")
		j.Steps[0].Recipient = "not-an-email"
		mustSubmit(t, m, j)
		if err := NewEngine(m, p).Work(context.Background(), "w"); err != nil {
			t.Fatalf("Work = %v, want nil", err)
		}
		info := inspect(t, m, "a")
		if info.State != "dead" || info.Reason != ReasonPermanent || info.Deliveries != 1 {
			t.Fatalf("%v; want dead after 1 delivery with reason %q", info, ReasonPermanent)
		}
	})
}

// R3/R5: the job is visible again at Expires exactly; the old lease no longer holds at Expires.
func TestProbeLeaseEndsAtExpiresExactly(t *testing.T) {
	each(t, Options{VisibilityTimeout: 10 * time.Second}, func(t *testing.T, b Backend, clk *manual) {
		ctx := context.Background()
		mustSubmit(t, b, job("a", "d1", "d2"))
		l1 := mustLease(t, b, "w1")
		clk.Add(10*time.Second - time.Millisecond)
		if _, err := b.Lease(ctx, "w2"); !errors.Is(err, ErrNoJob) {
			t.Fatalf("1 ms before Expires: Lease = %v, want ErrNoJob", err)
		}
		clk.Add(time.Millisecond)
		if err := b.Complete(ctx, l1); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Complete at Expires exactly = %v, want ErrLeaseLost", err)
		}
		l2, err := b.Lease(ctx, "w2")
		if err != nil || l2.Delivery != 2 {
			t.Fatalf("Lease at Expires exactly = %v, %v; want delivery 2", l2, err)
		}
	})
}

// R2: a duplicate (R1) is answered even when the backend is full.
func TestProbeDuplicateAnsweredWhenFull(t *testing.T) {
	each(t, Options{Capacity: 1}, func(t *testing.T, b Backend, clk *manual) {
		mustSubmit(t, b, job("a", "d1"))
		ok, err := b.Submit(context.Background(), job("a", "d1"))
		if ok || err != nil {
			t.Fatalf("duplicate Submit when full = %v, %v; want false, nil", ok, err)
		}
		if _, err := b.Submit(context.Background(), job("b", "d1")); !errors.Is(err, ErrFull) {
			t.Fatalf("new job when full: %v, want ErrFull", err)
		}
	})
}

// R8: a job dead-lettered by a Lease after its last lease ended keeps the last cause ever reported.
func TestProbeCrashDeadLetterKeepsLastError(t *testing.T) {
	each(t, Options{MaxDeliveries: 2, VisibilityTimeout: time.Minute}, func(t *testing.T, b Backend, clk *manual) {
		ctx := context.Background()
		mustSubmit(t, b, job("a", "d1"))
		l := mustLease(t, b, "w1")
		if err := b.Fail(ctx, l, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
		mustLease(t, b, "w2") // crashes
		clk.Add(time.Minute)
		if _, err := b.Lease(ctx, "w3"); !errors.Is(err, ErrNoJob) {
			t.Fatalf("Lease after last lease ended = %v, want ErrNoJob", err)
		}
		info := inspect(t, b, "a")
		if info.State != "dead" || info.Reason != "max deliveries" || info.LastError != "boom" {
			t.Fatalf("got %v; want dead, max deliveries, last error boom", info)
		}
	})
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

// failZAdd makes the next ZADD sent on its own fail, as a dropped connection would.
type failZAdd struct{ armed bool }

func (h *failZAdd) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *failZAdd) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.armed && cmd.Name() == "zadd" {
			h.armed = false
			err := errors.New("injected: connection reset")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *failZAdd) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if h.armed && c.Name() == "zadd" {
				h.armed = false
				err := errors.New("injected: connection reset")
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// R14: a failed command makes the operation return that error and leaves Redis unchanged.
func TestProbeFailedSubmitChangesNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		clk := newManual()
		_, rdb := fakeredis.Start(t)
		h := &failZAdd{armed: true}
		rdb.AddHook(h)
		r, _ := NewRedis(rdb, "ns", Options{Now: clk.Now})
		if _, err := r.Submit(context.Background(), job("a", "d1")); err == nil {
			t.Fatal("Submit with a failed ZADD returned nil")
		}
		if _, err := r.Inspect(context.Background(), "a"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("after a failed Submit, Inspect = %v; want ErrUnknownJob (nothing stored)", err)
		}
		mustSubmit(t, r, job("a", "d1"))
		if l := mustLease(t, r, "w"); l.Job.ID != "a" {
			t.Fatalf("leased %v", l)
		}
	})
}

// R3/R10: the job comes exactly as submitted, even if the caller reuses its slice.
func TestProbeJobIsCopiedIn(t *testing.T) {
	each(t, Options{}, func(t *testing.T, b Backend, clk *manual) {
		j := job("a", "d1", "d2")
		mustSubmit(t, b, j)
		j.Steps[0].DocumentID = "changed-after-submit"
		l := mustLease(t, b, "w")
		if l.Job.Steps[0].DocumentID != "d1" {
			t.Fatalf("leased step 0 document %q, want d1 as submitted", l.Job.Steps[0].DocumentID)
		}
		l.Job.Steps[1].DocumentID = "changed-after-lease"
		if got := inspect(t, b, "a").Job.Steps[1].DocumentID; got != "d2" {
			t.Fatalf("inspected step 1 document %q, want d2", got)
		}
	})
}

// R4: every lease carries a token greater than every token granted before, for any job.
func TestProbeTokensGrowAcrossJobs(t *testing.T) {
	each(t, Options{}, func(t *testing.T, b Backend, clk *manual) {
		mustSubmit(t, b, job("a", "d1"))
		clk.Add(time.Millisecond)
		mustSubmit(t, b, job("b", "d2"))
		la := mustLease(t, b, "w1")
		lb := mustLease(t, b, "w2")
		if la.Job.ID != "a" || lb.Job.ID != "b" {
			t.Fatalf("leased %s then %s, want a then b", la.Job.ID, lb.Job.ID)
		}
		if la.Token <= 0 || lb.Token <= la.Token {
			t.Fatalf("tokens %d then %d: the second lease must carry a greater token", la.Token, lb.Token)
		}
	})
}

// General tests of the correct design (not probes of one bug).

func TestConcurrentLeasesAndSubmitsHaveOneWinner(t *testing.T) {
	each(t, Options{Capacity: 3}, func(t *testing.T, b Backend, clk *manual) {
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		added := 0
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := b.Submit(ctx, job(fmt.Sprintf("j%d", i%5), "d"))
				if err != nil && !errors.Is(err, ErrFull) {
					t.Errorf("Submit: %v", err)
				}
				if ok {
					mu.Lock()
					added++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if added != 3 {
			t.Fatalf("%d submissions stored with room for 3", added)
		}
		seen := map[string]int{}
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := b.Lease(ctx, "w")
				if errors.Is(err, ErrNoJob) {
					return
				}
				if err != nil {
					t.Errorf("Lease: %v", err)
					return
				}
				mu.Lock()
				seen[l.Job.ID]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(seen) != 3 {
			t.Fatalf("leased %v, want 3 distinct jobs once each", seen)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("job %s delivered %d times at once", id, n)
			}
		}
	})
}

func TestChaosEveryJobDoneOnceOrDead(t *testing.T) {
	each(t, Options{VisibilityTimeout: time.Minute, MaxDeliveries: 8}, func(t *testing.T, b Backend, clk *manual) {
		p := provider.New(provider.Options{ResponseTimeout: 5 * time.Second})
		p.SetChaos(provider.Chaos{Seed: 7, FailBeforeCommit: 0.15, LoseResponse: 0.15})
		crash := 0
		var cancel context.CancelFunc
		p.OnCommit(func(provider.Delivery) {
			crash++
			if crash%4 == 0 && cancel != nil {
				cancel() // the worker dies right after the provider committed
			}
		})
		for i := range 6 {
			j := job(fmt.Sprintf("job-%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i), fmt.Sprintf("c%d", i))
			if i == 5 {
				j.Steps[1].Recipient = "malformed"
			}
			mustSubmit(t, b, j)
		}
		e := NewEngine(b, p)
		for range 400 {
			var ctx context.Context
			ctx, cancel = context.WithCancel(context.Background())
			err := e.Work(ctx, "w")
			cancel()
			if errors.Is(err, ErrNoJob) {
				clk.Add(30 * time.Second)
			}
		}
		for i := range 6 {
			info := inspect(t, b, fmt.Sprintf("job-%d", i))
			switch info.State {
			case "done":
				for _, s := range info.Job.Steps {
					if got := p.Received(s.Recipient); got != 1 {
						t.Errorf("%s done but %s received %d", info.Job.ID, s.Recipient, got)
					}
				}
			case "dead":
				if info.Reason == "" {
					t.Errorf("%v: dead without a reason", info)
				}
				for _, s := range info.Job.Steps {
					if got := p.Received(s.Recipient); got > 1 {
						t.Errorf("%s: %s received %d", info.Job.ID, s.Recipient, got)
					}
				}
			default:
				t.Errorf("%v: not finished", info)
			}
		}
		if info := inspect(t, b, "job-5"); info.State != "dead" || info.Reason != ReasonPermanent {
			t.Errorf("job-5: %v, want dead (permanent)", info)
		}
	})
}
