package backpressure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = math.MaxInt64
	_ = time.Second
	_ = fakeclock.Now
	_ sync.Mutex
)

// claims records every Claim; a key in fail fails; while hold is not nil,
// every Claim waits for it to be closed.
type claims struct {
	mu   sync.Mutex
	keys []string
	fail map[string]error
	hold chan struct{}
}

func (c *claims) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	c.keys = append(c.keys, tenant+"/"+key)
	err := c.fail[key]
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return err
}

func (c *claims) count() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.keys) }

func tk(id string) Task { return Task{ID: id, DocumentID: "doc-" + id} }

// submitAsync runs Submit in a goroutine; the channel gets its result.
func submitAsync(q *Queue, ctx context.Context, tenant, key string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Submit(ctx, tenant, key, tk(key)) }()
	return ch
}

// R5: admission comes before the claim: a refused job leaves its key unclaimed.
func TestProbeRefusedJobClaimsNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{}
		q := New(Options{Capacity: 1, Claimer: c})
		ctx := context.Background()
		if err := q.Submit(ctx, "t", "a", tk("a")); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := q.Submit(ctx, "t", "b", tk("b")); !errors.Is(err, ErrQueueFull) {
				t.Fatalf("Submit to a full queue = %v, want ErrQueueFull", err)
			}
		}
		if n := c.count(); n != 1 {
			t.Fatalf("claim store saw %d claims (%v), want 1: refused jobs must claim nothing", n, c.keys)
		}
	})
}

// R5: a slow claim holds up no other Submit, Take or Stats. (Real goroutines, not a
// bubble: a goroutine blocked on a mutex is not durably blocked, so synctest could not
// see it; the 500 ms bound is only reached when the probe fails.)
func TestProbeSlowClaimHoldsUpNobody(t *testing.T) {
	entered := make(chan struct{})
	c := &enteringClaims{claims: claims{hold: make(chan struct{})}, entered: entered}
	q := New(Options{Capacity: 4, Claimer: c})
	ch := submitAsync(q, context.Background(), "t", "a")
	<-entered
	got := make(chan string, 1)
	go func() {
		_, err := q.Take(context.Background())
		err2 := q.Submit(context.Background(), "u", "b", tk("b")) // a second Submit, its claim not held
		got <- fmt.Sprintf("take empty: %v; depth %d; submit %v", errors.Is(err, ErrQueueEmpty), q.Stats().Depth, err2)
	}()
	select {
	case s := <-got:
		if s != "take empty: true; depth 1; submit <nil>" {
			t.Errorf("during a slow claim: %s", s)
		}
	case <-time.After(500 * time.Millisecond):
		t.Error("Take/Submit/Stats blocked while another Submit's claim was in progress")
	}
	close(c.hold)
	<-ch
}

type enteringClaims struct {
	claims
	once    sync.Once
	entered chan struct{}
}

func (c *enteringClaims) Claim(ctx context.Context, tenant, key string) error {
	if key == "a" {
		c.once.Do(func() { close(c.entered) })
		return c.claims.Claim(ctx, tenant, key)
	}
	return nil
}

// R8: a place reserved by a Submit still claiming its key is not a job waiting.
func TestProbeReservationIsNotDepth(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{})}
		q := New(Options{Capacity: 4, Claimer: c})
		ch := submitAsync(q, context.Background(), "t", "a")
		fakeclock.Wait()
		if s := q.Stats(); s.Depth != 0 {
			t.Fatalf("Depth = %d while the only Submit is claiming, want 0", s.Depth)
		}
		close(c.hold)
		fakeclock.Wait()
		<-ch
		if s := q.Stats(); s.Depth != 1 {
			t.Fatalf("Depth = %d after the claim, want 1", s.Depth)
		}
	})
}

// R3: Enqueued is when the job entered the queue, once its claim succeeded.
func TestProbeEnqueuedAfterTheClaim(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{})}
		q := New(Options{Capacity: 4, Claimer: c})
		start := time.Now()
		ch := submitAsync(q, context.Background(), "t", "a")
		fakeclock.Advance(5 * time.Second)
		close(c.hold)
		fakeclock.Wait()
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
		a, err := q.Take(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Enqueued.Sub(start); got != 5*time.Second {
			t.Fatalf("Enqueued %v after Submit began, want 5s (after the slow claim)", got)
		}
	})
}

// R6: a failed claim gives the place back at once: a Submit waiting for it is admitted.
func TestProbeFailedClaimWakesWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{}), fail: map[string]error{"dup": errors.New("key already claimed")}}
		q := New(Options{Capacity: 1, MaxWait: time.Minute, Claimer: c})
		ctx := context.Background()
		dup := submitAsync(q, ctx, "t", "dup")
		fakeclock.Wait()
		waiter := submitAsync(q, ctx, "t", "x")
		fakeclock.Wait()
		close(c.hold) // dup's claim fails
		fakeclock.Wait()
		if err := <-dup; err == nil {
			t.Fatal("dup admitted")
		}
		select {
		case err := <-waiter:
			if err != nil {
				t.Fatalf("waiter = %v, want admitted", err)
			}
		default:
			t.Fatal("the place given back by a failed claim did not admit the waiting Submit at once")
		}
	})
}

// R11: a recovery longer than the longest Duration is that longest Duration, never negative.
func TestProbeForecastClampsLongRecovery(t *testing.T) {
	f, err := ForecastBacklog(math.MaxInt, 0, 1e-3)
	if err != nil || f.Recovery != time.Duration(math.MaxInt64) || f.Never {
		t.Fatalf("huge backlog: %v (%d ns), %v; want the longest Duration", f, int64(f.Recovery), err)
	}
}

// R11: Recovery = backlog / (capacity - arrival) seconds, to within a nanosecond.
func TestProbeForecastSubSecond(t *testing.T) {
	f, err := ForecastBacklog(1, 0, 2)
	if err != nil || f.Recovery != 500*time.Millisecond {
		t.Fatalf("1 job at 2/s: %v, %v; want 500ms", f, err)
	}
	f, err = ForecastBacklog(12000, 80, 100)
	if err != nil || f.Recovery != 10*time.Minute || f.Growth != -20 {
		t.Fatalf("12000 at 80 vs 100: %v, %v", f, err)
	}
}

// R10: completion latency runs from Enqueued to Done, time waiting in the queue included.
func TestProbeLatencyIncludesQueueTime(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{})
		ctx := context.Background()
		_ = q.Submit(ctx, "t", "a", tk("a"))
		fakeclock.Advance(3 * time.Second)
		a, _ := q.Take(ctx)
		fakeclock.Advance(2 * time.Second)
		if err := q.Done(ctx, a.Ticket); err != nil {
			t.Fatal(err)
		}
		if s := q.Stats(); s.LastLatency != 5*time.Second || s.MaxLatency != 5*time.Second {
			t.Fatalf("latencies %v / %v, want 5s / 5s (from Enqueued)", s.LastLatency, s.MaxLatency)
		}
	})
}

// R10: MaxLatency is the longest since New, kept whatever the order of the Dones.
func TestProbeMaxLatencyIsTheLongestEver(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{})
		ctx := context.Background()
		for _, d := range []time.Duration{5 * time.Second, time.Second, 3 * time.Second} {
			_ = q.Submit(ctx, "t", fmt.Sprint(d), tk("x"))
			a, _ := q.Take(ctx)
			fakeclock.Advance(d)
			if err := q.Done(ctx, a.Ticket); err != nil {
				t.Fatal(err)
			}
		}
		if s := q.Stats(); s.MaxLatency != 5*time.Second || s.LastLatency != 3*time.Second {
			t.Fatalf("max %v last %v after latencies 5s,1s,3s; want 5s, 3s", s.MaxLatency, s.LastLatency)
		}
	})
}

// R4: a wakeup that finds no room for the waiter does not start its MaxWait again.
func TestProbeWakeupDoesNotRestartMaxWait(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 3, TenantLimit: 2, MaxWait: 10 * time.Second})
		ctx := context.Background()
		for _, s := range [][2]string{{"c", "c1"}, {"a", "a1"}, {"a", "a2"}} {
			if err := q.Submit(ctx, s[0], s[1], tk(s[1])); err != nil {
				t.Fatal(err)
			}
		}
		ch := submitAsync(q, ctx, "a", "a3")
		fakeclock.Advance(4 * time.Second)
		if a, err := q.Take(ctx); err != nil || a.Key != "c1" {
			t.Fatalf("Take = %v, %v", a, err)
		}
		fakeclock.Advance(6*time.Second - time.Nanosecond)
		select {
		case err := <-ch:
			t.Fatalf("waiter returned %v before its MaxWait", err)
		default:
		}
		fakeclock.Advance(time.Nanosecond)
		select {
		case err := <-ch:
			if !errors.Is(err, ErrQueueFull) {
				t.Fatalf("waiter = %v, want ErrQueueFull (its tenant share is full)", err)
			}
		default:
			t.Fatal("10 s after it started, the waiter is still waiting: the wakeup at 4 s restarted its MaxWait")
		}
	})
}

// R9: OldestAge is the oldest *waiting* job's age, not a taken job's.
func TestProbeOldestAgeFollowsTake(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{})
		ctx := context.Background()
		_ = q.Submit(ctx, "t", "a", tk("a"))
		fakeclock.Advance(10 * time.Second)
		_ = q.Submit(ctx, "t", "b", tk("b"))
		fakeclock.Advance(20 * time.Second)
		if s := q.Stats(); s.OldestAge != 30*time.Second {
			t.Fatalf("OldestAge %v, want 30s", s.OldestAge)
		}
		_, _ = q.Take(ctx)
		if s := q.Stats(); s.OldestAge != 20*time.Second {
			t.Fatalf("after taking a: OldestAge %v, want 20s (b's)", s.OldestAge)
		}
		_, _ = q.Take(ctx)
		if s := q.Stats(); s.OldestAge != 0 {
			t.Fatalf("empty: OldestAge %v, want 0", s.OldestAge)
		}
	})
}

// R8: Rejected counts the Submits that returned ErrQueueFull, not one that returned its context's error.
func TestProbeCancelledWaiterIsNotARejection(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Minute})
		if err := q.Submit(context.Background(), "t", "a", tk("a")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ch := submitAsync(q, ctx, "t", "b")
		fakeclock.Advance(time.Second)
		cancel()
		fakeclock.Wait()
		if err := <-ch; !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
			t.Fatalf("cancelled waiter = %v, want context.Canceled only", err)
		}
		if s := q.Stats(); s.Rejected != 0 {
			t.Fatalf("Rejected = %d after a cancelled wait, want 0", s.Rejected)
		}
	})
}

// R2: a job refused because no place of the queue is free gets ErrQueueFull itself,
// not ErrTenantFull, even when its tenant's share is full too.
func TestProbeQueueFullWinsOverTenantFull(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1})
		ctx := context.Background()
		_ = q.Submit(ctx, "a", "a1", tk("a1"))
		_ = q.Submit(ctx, "b", "b1", tk("b1"))
		err := q.Submit(ctx, "a", "a2", tk("a2"))
		if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
			t.Fatalf("Submit with queue and share both full = %v; want ErrQueueFull, not ErrTenantFull", err)
		}
	})
}

// R4: a place freed admits at once a waiting Submit it has room for, whether or not another
// Submit, which it has no room for, has waited longer.
func TestProbeFreedPlaceAdmitsYoungerWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 3, TenantLimit: 2, MaxWait: time.Minute})
		ctx := context.Background()
		for _, s := range [][2]string{{"c", "c1"}, {"a", "a1"}, {"a", "a2"}} {
			if err := q.Submit(ctx, s[0], s[1], tk(s[1])); err != nil {
				t.Fatal(err)
			}
		}
		older := submitAsync(q, ctx, "a", "a3") // its share is full too
		fakeclock.Advance(time.Second)
		younger := submitAsync(q, ctx, "b", "b1")
		fakeclock.Advance(time.Second)
		if a, _ := q.Take(ctx); a.Key != "c1" {
			t.Fatalf("took %v", a)
		}
		fakeclock.Wait()
		select {
		case err := <-younger:
			if err != nil {
				t.Fatalf("b1 = %v", err)
			}
		default:
			t.Fatal("the place c1 freed did not admit b1 at once (a3, waiting longer, cannot use it)")
		}
		select {
		case err := <-older:
			t.Fatalf("a3 returned %v, want still waiting", err)
		default:
		}
		fakeclock.Advance(time.Minute)
		<-older
	})
}
