package backpressure

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = math.MaxInt64
var _ = time.Second
var _ sync.Mutex

var bg = context.Background()

// probeClaimer records claims; hook, when set, runs first and its error
// fails the claim.
type probeClaimer struct {
	mu   sync.Mutex
	keys []string
	hook func(key string) error
}

func (c *probeClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	hook := c.hook
	c.mu.Unlock()
	if hook != nil {
		if err := hook(key); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, tenant+"/"+key)
	return nil
}

func (c *probeClaimer) claimed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

func sub(t *testing.T, q *Queue, tenant, key string) {
	t.Helper()
	if err := q.Submit(bg, tenant, key, Task{ID: key}); err != nil {
		t.Fatalf("submit %s/%s: %v", tenant, key, err)
	}
}

func take(t *testing.T, q *Queue) Admitted {
	t.Helper()
	a, err := q.Take(bg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestProbeRefusedJobClaimsNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &probeClaimer{}
		q := New(Options{Capacity: 1, Claimer: c})
		sub(t, q, "acme", "k1")
		if err := q.Submit(bg, "acme", "k2", Task{}); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("submit to full queue: %v", err)
		}
		if got := c.claimed(); len(got) != 1 {
			t.Fatalf("claims after a refusal: %v", got)
		}
		take(t, q)
		sub(t, q, "acme", "k2")
		if got := c.claimed(); len(got) != 2 || got[1] != "acme/k2" {
			t.Fatalf("claims %v", got)
		}
	})
}

func TestProbeSlowClaimHoldsUpNobody(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	c := &probeClaimer{hook: func(key string) error {
		if key == "slow" {
			close(entered)
			<-release
		}
		return nil
	}}
	q := New(Options{Capacity: 4, Claimer: c})
	done := make(chan error, 1)
	go func() { done <- q.Submit(bg, "acme", "slow", Task{}) }()
	<-entered
	got := make(chan Stats, 1)
	go func() { got <- q.Stats() }()
	select {
	case s := <-got:
		if s.Depth != 0 {
			t.Errorf("depth %d while the only job is claiming", s.Depth)
		}
	case <-time.After(500 * time.Millisecond):
		t.Errorf("Stats did not answer during a slow claim")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestProbeReservedIsNotDepth(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		release := make(chan struct{})
		c := &probeClaimer{hook: func(key string) error {
			if key == "slow" {
				<-release
			}
			return nil
		}}
		q := New(Options{Capacity: 4, TenantLimit: 4, Claimer: c})
		sub(t, q, "acme", "k1")
		done := make(chan error, 1)
		go func() { done <- q.Submit(bg, "acme", "slow", Task{}) }()
		fakeclock.Wait()
		if s := q.Stats(); s.Depth != 1 {
			t.Errorf("depth %d, want 1 (one job waiting, one claiming)", s.Depth)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestProbeFailedClaimFreesTenantShare(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		dup := errors.New("duplicate key")
		c := &probeClaimer{hook: func(key string) error {
			if key == "dup" {
				return dup
			}
			return nil
		}}
		q := New(Options{Capacity: 4, TenantLimit: 1, Claimer: c})
		if err := q.Submit(bg, "acme", "dup", Task{}); !errors.Is(err, dup) {
			t.Fatalf("failing claim: %v", err)
		}
		if err := q.Submit(bg, "acme", "k2", Task{}); err != nil {
			t.Fatalf("after a failed claim the tenant's share must be free: %v", err)
		}
	})
}

func TestProbeFailedClaimNotRejected(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		down := errors.New("claim store down")
		c := &probeClaimer{hook: func(string) error { return down }}
		q := New(Options{Capacity: 4, Claimer: c})
		if err := q.Submit(bg, "acme", "k", Task{}); !errors.Is(err, down) {
			t.Fatal(err)
		}
		if s := q.Stats(); s.Rejected != 0 || s.Depth != 0 {
			t.Fatalf("stats %v", s)
		}
	})
}

func TestProbeEnqueuedAfterClaim(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &probeClaimer{hook: func(string) error { time.Sleep(5 * time.Second); return nil }}
		q := New(Options{Capacity: 4, Claimer: c})
		start := time.Now()
		sub(t, q, "acme", "k")
		a := take(t, q)
		if want := start.Add(5 * time.Second); !a.Enqueued.Equal(want) {
			t.Fatalf("Enqueued %v, want %v", a.Enqueued, want)
		}
	})
}

func TestProbeMaxWaitCountedOnce(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1, MaxWait: 10 * time.Second})
		sub(t, q, "B", "b1")
		sub(t, q, "A", "a1")
		start := time.Now()
		errc := make(chan error, 1)
		var at time.Time
		go func() {
			err := q.Submit(bg, "A", "a2", Task{})
			at = time.Now()
			errc <- err
		}()
		time.Sleep(5 * time.Second)
		if a := take(t, q); a.Key != "b1" {
			t.Fatal(a)
		}
		err := <-errc
		if !errors.Is(err, ErrTenantFull) || !at.Equal(start.Add(10*time.Second)) {
			t.Fatalf("waiter returned %v after %v, want ErrTenantFull after 10s", err, at.Sub(start))
		}
	})
}

func TestProbeFailedClaimAdmitsWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		dup := errors.New("duplicate")
		c := &probeClaimer{hook: func(key string) error {
			if key == "dup" {
				time.Sleep(2 * time.Second)
				return dup
			}
			return nil
		}}
		q := New(Options{Capacity: 1, MaxWait: 10 * time.Second, Claimer: c})
		start := time.Now()
		go q.Submit(bg, "A", "dup", Task{})
		fakeclock.Wait()
		var at time.Time
		errc := make(chan error, 1)
		go func() {
			err := q.Submit(bg, "B", "k", Task{})
			at = time.Now()
			errc <- err
		}()
		if err := <-errc; err != nil || !at.Equal(start.Add(2*time.Second)) {
			t.Fatalf("waiter: %v after %v, want admitted after 2s", err, at.Sub(start))
		}
	})
}

func TestProbeLatencyFromEnqueued(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4})
		sub(t, q, "acme", "k")
		time.Sleep(10 * time.Second)
		a := take(t, q)
		time.Sleep(5 * time.Second)
		if err := q.Done(bg, a.Ticket); err != nil {
			t.Fatal(err)
		}
		if s := q.Stats(); s.LastLatency != 15*time.Second || s.MaxLatency != 15*time.Second {
			t.Fatalf("stats %v", s)
		}
	})
}

func TestProbeMaxLatencyKept(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4})
		sub(t, q, "acme", "a")
		time.Sleep(10 * time.Second)
		a := take(t, q)
		if err := q.Done(bg, a.Ticket); err != nil {
			t.Fatal(err)
		}
		sub(t, q, "acme", "b")
		time.Sleep(3 * time.Second)
		b := take(t, q)
		if err := q.Done(bg, b.Ticket); err != nil {
			t.Fatal(err)
		}
		sub(t, q, "acme", "c")
		time.Sleep(1 * time.Second)
		c := take(t, q)
		if err := q.Done(bg, c.Ticket); err != nil {
			t.Fatal(err)
		}
		if s := q.Stats(); s.MaxLatency != 10*time.Second || s.LastLatency != time.Second {
			t.Fatalf("stats %v", s)
		}
	})
}

func TestProbeOldestAgeIsHead(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4, TenantLimit: 4})
		sub(t, q, "acme", "a")
		time.Sleep(10 * time.Second)
		sub(t, q, "acme", "b")
		time.Sleep(5 * time.Second)
		if s := q.Stats(); s.OldestAge != 15*time.Second {
			t.Fatalf("oldest age %v, want 15s", s.OldestAge)
		}
	})
}

func TestProbeForecastCapsAtLongestDuration(t *testing.T) {
	for _, c := range []struct {
		backlog  int
		capacity float64
	}{{math.MaxInt, 1}, {10_000_000_000, 1}} {
		f, err := ForecastBacklog(c.backlog, 0, c.capacity)
		if err != nil || f.Recovery != time.Duration(math.MaxInt64) || f.Never {
			t.Fatalf("forecast %d/%g: %v %v", c.backlog, c.capacity, f, err)
		}
	}
}

func TestProbeEmptyBacklogDrained(t *testing.T) {
	for _, r := range [][2]float64{{50, 50}, {80, 60}, {0, 0}} {
		f, err := ForecastBacklog(0, r[0], r[1])
		if err != nil || f.Never || f.Recovery != 0 || f.Growth != r[0]-r[1] {
			t.Fatalf("forecast(0, %v): %v %v", r, f, err)
		}
	}
}

func TestProbeForecastRefusesNaNAndInf(t *testing.T) {
	for _, r := range [][2]float64{{math.NaN(), 1}, {1, math.NaN()}, {math.Inf(1), 1}, {1, math.Inf(1)}} {
		if _, err := ForecastBacklog(10, r[0], r[1]); !errors.Is(err, ErrInvalidRate) {
			t.Fatalf("forecast %v: %v", r, err)
		}
	}
}

func TestProbeFullQueueIsQueueFull(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 2})
		sub(t, q, "A", "1")
		sub(t, q, "A", "2")
		err := q.Submit(bg, "A", "3", Task{})
		if !errors.Is(err, ErrQueueFull) || errors.Is(err, ErrTenantFull) {
			t.Fatalf("full queue and full share: %v, want ErrQueueFull itself", err)
		}
	})
}

func TestProbeCancelledWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Minute})
		sub(t, q, "A", "1")
		ctx, cancel := context.WithCancel(bg)
		errc := make(chan error, 1)
		go func() { errc <- q.Submit(ctx, "B", "2", Task{}) }()
		time.Sleep(3 * time.Second)
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrQueueFull) {
			t.Fatalf("cancelled waiter: %v", err)
		}
		if s := q.Stats(); s.Rejected != 0 {
			t.Fatalf("rejected %d", s.Rejected)
		}
	})
}

func TestProbeCorrectScenario(t *testing.T) {
	f, err := ForecastBacklog(12000, 80, 100)
	if err != nil || f.Recovery != 600*time.Second || f.Growth != -20 {
		t.Fatal(f, err)
	}
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 3})
		sub(t, q, "a", "1")
		sub(t, q, "b", "2")
		sub(t, q, "c", "3")
		if err := q.Submit(bg, "d", "4", Task{}); !errors.Is(err, ErrQueueFull) {
			t.Fatal(err)
		}
		a := take(t, q)
		if a.Key != "1" || a.Ticket == 0 {
			t.Fatal(a)
		}
		if err := q.Done(bg, a.Ticket); err != nil {
			t.Fatal(err)
		}
		if err := q.Done(bg, a.Ticket); !errors.Is(err, ErrUnknownTicket) {
			t.Fatal(err)
		}
		s := q.Stats()
		if s.Depth != 2 || s.Rejected != 1 || s.Completed != 1 {
			t.Fatal(s)
		}
	})
}
