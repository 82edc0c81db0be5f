package retrysuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
)

// ---------------------------------------------------------------------------
// bounded-attempts

func checkAttempts(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 3, Base: 100 * time.Millisecond, Cap: time.Second, Rand: seeded(seed, 1)}

	h.Note("MaxAttempts = 3; the dependency answers 503 to every call")
	c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error { return unavailable(k) }}
	o := c.do(t, context.Background())
	if requireAttempts(t, "MaxAttempts = 3, always 503", o) {
		if n := len(o.attempts); n != 3 {
			t.Errorf("Do with MaxAttempts = 3 against an operation that always fails made %d attempts, want 3 (1 try + 2 retries)", n)
		}
		if !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping the last attempt's error %q", o.err, o.last())
		}
		if wait := o.returned - o.lastAt(); wait != 0 {
			t.Errorf("Do returned %v after its last attempt failed, want at once: there is no attempt left to wait for", wait)
		}
	}

	h.Note("MaxAttempts = 1; the dependency answers 503")
	one := cfg
	one.MaxAttempts = 1
	c = &caller{h: h, actor: "caller", r: tg.policy(one), script: func(_ context.Context, k int) error { return unavailable(k) }}
	o = c.do(t, context.Background())
	if requireAttempts(t, "MaxAttempts = 1", o) {
		if n := len(o.attempts); n != 1 {
			t.Errorf("Do with MaxAttempts = 1 made %d attempts, want 1 (the try, no retry)", n)
		}
		if o.returned != 0 {
			t.Errorf("Do with MaxAttempts = 1 returned after %v, want at once", o.returned)
		}
	}

	h.Note("MaxAttempts = 3; the dependency fails twice, then succeeds")
	c = &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
		if k <= 2 {
			return unavailable(k)
		}
		return nil
	}}
	o = c.do(t, context.Background())
	if requireAttempts(t, "fails twice, then succeeds", o) {
		if len(o.attempts) != 3 || o.err != nil {
			t.Errorf("Do with MaxAttempts = 3 against an operation that succeeds on attempt 3 = %v after %d attempts, want nil after 3", o.err, len(o.attempts))
		}
	}

	h.Note("MaxAttempts = 3; the dependency fails three times, then would succeed")
	c = &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
		if k <= 3 {
			return unavailable(k)
		}
		return nil
	}}
	o = c.do(t, context.Background())
	if requireAttempts(t, "fails three times", o) {
		if len(o.attempts) != 3 || o.err == nil {
			t.Errorf("Do with MaxAttempts = 3 against an operation that would succeed only on attempt 4 = %v after %d attempts, want the third attempt's error after 3", o.err, len(o.attempts))
		}
	}
}

// ---------------------------------------------------------------------------
// capped-exponential

func checkCeiling(t *testing.T, h *suites.History, tg target) {
	const base, capd = 100 * time.Millisecond, 10 * time.Second
	top := tg.policy(Config[any]{MaxAttempts: 5, Base: base, Cap: capd, Rand: rand.New(maxDraws)})
	h.Note("Base = %v, Cap = %v; the generator always draws its largest value", base, capd)
	for n := 0; n <= 12; n++ {
		want := ceiling(base, capd, n)
		got := delayOf(t, top, n)
		h.Record("policy", fmt.Sprintf("Delay(%d)", n), fmt.Sprintf("%v (ceiling %v)", got, want))
		if !nearTop(got, want) {
			switch {
			case got > capd:
				t.Errorf("Delay(%d) = %v, want <= Cap = %v: the cap bounds every delay", n, got, capd)
			default:
				t.Errorf("Delay(%d) = %v with a generator that always draws its largest value, want %v = min(Cap, Base·2^%d)", n, got, want, n)
			}
		}
	}
	// Cap not a power-of-two multiple of Base, and Base above Cap.
	odd := tg.policy(Config[any]{MaxAttempts: 5, Base: 300 * time.Millisecond, Cap: time.Second, Rand: rand.New(maxDraws)})
	for n, want := range []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Second} {
		if got := delayOf(t, odd, n); !nearTop(got, want) {
			t.Errorf("with Base = 300ms and Cap = 1s, Delay(%d) = %v at the largest draw, want %v", n, got, want)
		}
	}
	high := tg.policy(Config[any]{MaxAttempts: 5, Base: 2 * time.Second, Cap: time.Second, Rand: rand.New(maxDraws)})
	if got := delayOf(t, high, 0); !nearTop(got, time.Second) {
		t.Errorf("with Base = 2s above Cap = 1s, Delay(0) = %v at the largest draw, want 1s: the cap wins", got)
	}
}

func checkSchedule(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base, capd, attempts = 100 * time.Millisecond, 2 * time.Second, 7
	mk := func() Retrier {
		return tg.policy(Config[any]{MaxAttempts: attempts, Base: base, Cap: capd, Rand: seeded(seed, 7)})
	}
	// A second policy with an identically seeded generator tells what the
	// first one's Delay(0), Delay(1), ... draw.
	want := make([]time.Duration, attempts-1)
	ref := mk()
	for n := range want {
		want[n] = delayOf(t, ref, n)
	}
	h.Note("MaxAttempts = %d, Base = %v, Cap = %v; for this seed Delay(0..%d) = %v", attempts, base, capd, attempts-2, want)
	c := &caller{h: h, actor: "caller", r: mk(), script: func(_ context.Context, k int) error { return unavailable(k) }}
	o := c.do(t, context.Background())
	if !requireAttempts(t, "always 503", o) {
		return
	}
	for k := 1; k < len(o.attempts) && k < attempts; k++ {
		gap := o.attempts[k].at - o.attempts[k-1].at
		if gap != want[k-1] {
			t.Errorf("attempt %d started %v after attempt %d, want exactly Delay(%d) = %v (the same seed draws the same delays; Do must sleep Delay(k-1) after attempt k and draw nothing else)", k+1, gap, k, k-1, want[k-1])
			return
		}
	}
	if len(o.attempts) != attempts {
		t.Errorf("Do made %d attempts with MaxAttempts = %d, want %d", len(o.attempts), attempts, attempts)
	}
}

// ---------------------------------------------------------------------------
// full-jitter

func checkFullJitter(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base, capd, draws = 100 * time.Millisecond, 10 * time.Second, 4000
	low := tg.policy(Config[any]{MaxAttempts: 5, Base: base, Cap: capd, Rand: rand.New(minDraws)})
	for _, n := range []int{0, 3, 10} {
		if got := delayOf(t, low, n); got > ceiling(base, capd, n)/10000+time.Microsecond {
			t.Errorf("Delay(%d) = %v with a generator that always draws its smallest value, want 0: full jitter draws from the whole window [0, ceiling]", n, got)
			break
		}
	}
	for _, n := range []int{0, 3, 6, 7, 20} {
		c := ceiling(base, capd, n)
		p := tg.policy(Config[any]{MaxAttempts: 5, Base: base, Cap: capd, Rand: seeded(seed, uint64(n))})
		var sum float64
		var quarters [4]int
		distinct := map[time.Duration]bool{}
		lo, hi := time.Duration(1<<62), time.Duration(-1<<62)
		for range draws {
			d := delayOf(t, p, n)
			if d < 0 || d > c {
				h.Record("policy", fmt.Sprintf("Delay(%d)", n), fmt.Sprintf("%v, outside [0, %v]", d, c))
				t.Fatalf("Delay(%d) = %v, want within [0, %v] (the ceiling min(Cap, Base·2^%d)); jitter must not push a delay past the cap", n, d, c, n)
			}
			sum += float64(d)
			quarters[min(int(4*float64(d)/float64(c)), 3)]++
			distinct[d] = true
			lo, hi = min(lo, d), max(hi, d)
		}
		mean := time.Duration(sum / draws)
		h.Record("policy", fmt.Sprintf("%d draws of Delay(%d)", draws, n),
			fmt.Sprintf("min %v, mean %v, max %v, %d distinct, per quarter of [0, %v]: %v", lo, mean, hi, len(distinct), c, quarters))
		// One message per window is enough: stop at the first window that
		// is not uniform.
		if len(distinct) < draws*9/10 {
			t.Errorf("%d draws of Delay(%d) gave only %d distinct values (ceiling %v), want nearly all different: delays must be random, at the cap too", draws, n, len(distinct), c)
			return
		}
		if mean < c*45/100 || mean > c*55/100 {
			t.Errorf("mean of %d draws of Delay(%d) = %v, want about %v (half the ceiling %v): full jitter is uniform over the whole window [0, ceiling]", draws, n, mean, c/2, c)
			return
		}
		for i, q := range quarters {
			if q < draws/5 || q > draws*3/10 {
				t.Errorf("%d of %d draws of Delay(%d) fell in quarter %d of [0, %v], want about a quarter of them: full jitter is uniform", q, draws, n, i+1, c)
				return
			}
		}
	}
}

func checkWorkers(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const workers = 100
	const limit = 20 // at most this many retries may start at one instant
	h.Note("%d workers each call Do at t=0; the dependency answers 503 to each worker's first 3 attempts", workers)
	outcomes := make([]*outcome, workers)
	calls := make([]*suites.Call, workers)
	for i := range workers {
		var hist *suites.History
		if i < 2 {
			hist = h // narrate two workers; the rest are summarised below
		}
		c := &caller{h: hist, actor: fmt.Sprintf("worker %02d", i),
			r: tg.policy(Config[any]{MaxAttempts: 4, Base: 100 * time.Millisecond, Cap: 5 * time.Second, Rand: seeded(seed, uint64(1000+i))}),
			script: func(_ context.Context, k int) error {
				if k <= 3 {
					return unavailable(k)
				}
				return nil
			}}
		calls[i], outcomes[i] = c.goDo(t, context.Background())
	}
	for _, call := range calls {
		call.Wait()
	}
	starts := map[time.Duration]int{}
	retries := 0
	for i, o := range outcomes {
		if !requireAttempts(t, fmt.Sprintf("worker %02d", i), o) {
			return
		}
		for _, a := range o.attempts[1:] {
			starts[a.at]++
			retries++
		}
	}
	var busiest time.Duration
	for at, n := range starts {
		if n > starts[busiest] || (n == starts[busiest] && at < busiest) {
			busiest = at
		}
	}
	h.Note("%d retries started at %d distinct instants; the busiest instant, t=%v, saw %d", retries, len(starts), busiest, starts[busiest])
	if retries == 0 {
		t.Errorf("no worker retried; each should have made 4 attempts")
		return
	}
	if n := starts[busiest]; n > limit {
		t.Errorf("%d of %d workers started a retry at the same instant t=%v, want at most %d: workers that failed together must not retry together", n, workers, busiest, limit)
	}
}

// ---------------------------------------------------------------------------
// seeded-source

func checkSource(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base, capd, n = 100 * time.Millisecond, 10 * time.Second, 50
	cfg := func(r *rand.Rand) Config[any] {
		return Config[any]{MaxAttempts: 4, Base: base, Cap: capd, Rand: r}
	}

	counting := &countingSource{src: rand.NewPCG(uint64(seed), 3)}
	p := tg.policy(cfg(rand.New(counting)))
	for i := range 8 {
		before := counting.n
		d := delayOf(t, p, i)
		if counting.n == before {
			h.Record("policy", fmt.Sprintf("Delay(%d)", i), fmt.Sprintf("%v, drew nothing from Policy.Rand", d))
			t.Fatalf("Delay(%d) = %v drew nothing from the *rand.Rand in Policy.Rand, want every random draw to come from it, so that the caller's seed decides the delays", i, d)
		}
	}

	sequence := func(r *rand.Rand) []time.Duration {
		p := tg.policy(cfg(r))
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = delayOf(t, p, i%8)
		}
		return out
	}
	first, again := sequence(seeded(seed, 4)), sequence(seeded(seed, 4))
	h.Note("seed %d: Delay(0..7) = %v", seed, first[:8])
	h.Note("seed %d again: Delay(0..7) = %v", seed, again[:8])
	for i := range first {
		if first[i] != again[i] {
			t.Fatalf("call %d, Delay(%d): %v the first time and %v the second, with two generators seeded alike; the same seed must reproduce the same delays", i+1, i%8, first[i], again[i])
		}
	}
	other := sequence(seeded(seed+1, 4))
	h.Note("seed %d: Delay(0..7) = %v", seed+1, other[:8])
	same := 0
	for i := range first {
		if first[i] == other[i] {
			same++
		}
	}
	if same > n/10 {
		t.Errorf("generators with seeds %d and %d gave the same delay in %d of %d calls, want different delays: a different seed must give a different schedule", seed, seed+1, same, n)
	}

	counting = &countingSource{src: rand.NewPCG(uint64(seed), 5)}
	h.Note("Do with MaxAttempts = 4 against a dependency that always answers 503")
	c := &caller{h: h, actor: "caller", r: tg.policy(cfg(rand.New(counting))), script: func(_ context.Context, k int) error { return unavailable(k) }}
	o := c.do(t, context.Background())
	if !requireAttempts(t, "always 503", o) {
		return
	}
	h.Note("Do drew %d values from Policy.Rand", counting.n)
	if retries := len(o.attempts) - 1; retries > 0 && counting.n < retries {
		t.Errorf("Do waited before %d retries but drew %d values from Policy.Rand, want at least one per wait: Do's jitter must come from the injected generator too", retries, counting.n)
	}
}

// ---------------------------------------------------------------------------
// no-overflow

func checkOverflow(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base, capd = 100 * time.Millisecond, 10 * time.Second
	top := tg.policy(Config[any]{MaxAttempts: 5, Base: base, Cap: capd, Rand: rand.New(maxDraws)})
	h.Note("Base = %v, Cap = %v; Base·2^n passes the int64 range of a Duration at n = 37", base, capd)
	var wrong []string
	for _, n := range []int{31, 32, 36, 37, 40, 62, 63, 64, 65, 100, 1000} {
		got := delayOf(t, top, n)
		h.Record("policy", fmt.Sprintf("Delay(%d) at the largest draw", n), got.String())
		if !nearTop(got, capd) {
			wrong = append(wrong, fmt.Sprintf("Delay(%d) = %v", n, got))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("with a generator that always draws its largest value, %s, want %v (Cap) each time: Base·2ⁿ overflows an int64 from n = 37 on, so the ceiling must be clamped to Cap before it is computed", strings.Join(wrong, ", "), capd)
	}
	for _, n := range []int{64, 1000} {
		p := tg.policy(Config[any]{MaxAttempts: 5, Base: base, Cap: capd, Rand: seeded(seed, uint64(n))})
		distinct := map[time.Duration]bool{}
		const draws = 200
		for range draws {
			d := delayOf(t, p, n)
			if d < 0 || d > capd {
				t.Fatalf("Delay(%d) = %v, want within [0, %v]", n, d, capd)
			}
			distinct[d] = true
		}
		h.Record("policy", fmt.Sprintf("%d draws of Delay(%d)", draws, n), fmt.Sprintf("%d distinct", len(distinct)))
		if len(distinct) < draws*9/10 {
			t.Errorf("%d draws of Delay(%d) gave %d distinct values, want nearly all different: at the cap the delay is still uniform over [0, Cap]", draws, n, len(distinct))
			return
		}
	}
}

// ---------------------------------------------------------------------------
// deadline

func checkDeadline(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const deadline = 10 * time.Second
	variants := []struct {
		name    string
		timeout time.Duration
		ctx     bool
	}{
		{"Policy.Timeout = 10s", deadline, false},
		{"a context with a 10s deadline", 0, true},
	}
	for i, v := range variants {
		part(t, h, func() {
			h.Note("deadline from %s; MaxAttempts = 20, Base = 1s, Cap = 8s; the dependency answers 503 to every call", v.name)
			ctx := context.Background()
			if v.ctx {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, deadline)
				defer cancel()
			}
			cfg := Config[any]{MaxAttempts: 20, Base: time.Second, Cap: 8 * time.Second, Timeout: v.timeout, Rand: seeded(seed, uint64(i))}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error { return unavailable(k) }}
			o := c.do(t, ctx)
			if !requireAttempts(t, v.name, o) {
				return
			}
			for k, a := range o.attempts {
				if a.at >= deadline {
					t.Errorf("with %s, attempt %d started at t=%v, want no attempt at or after the deadline", v.name, k+1, a.at)
					break
				}
			}
			if o.returned > deadline {
				t.Errorf("with %s, Do returned at t=%v, want by the deadline", v.name, o.returned)
			}
			if len(o.attempts) < 2 {
				t.Errorf("with %s, Do made %d attempt, want retries until the next wait would reach the deadline", v.name, len(o.attempts))
				return
			}
			if wait := o.returned - o.lastAt(); wait != 0 && o.lastAt() < deadline {
				t.Errorf("with %s, Do returned at t=%v, %v after its last attempt failed at t=%v; want it to give up at once when the next wait would reach the deadline", v.name, o.returned, wait, o.lastAt())
			}
			if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
				t.Errorf("with %s, Do(...) = %v, want an error wrapping context.DeadlineExceeded and the last attempt's error %q", v.name, o.err, o.last())
			}
		})
	}

	// An attempt that hangs must be cut off at the deadline too: the
	// operation waits for its context, or for an hour if the context never
	// ends. (It waits on a channel and a timer, never on a mutex, so the
	// bubble's clock can move.)
	part(t, h, func() {
		h.Note("Policy.Timeout = 10s; attempt 1 hangs until its context ends (or for an hour)")
		cfg := Config[any]{MaxAttempts: 3, Base: time.Second, Cap: 8 * time.Second, Timeout: deadline, Rand: seeded(seed, 9)}
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(opCtx context.Context, k int) error {
			if k > 1 {
				return unavailable(k)
			}
			select {
			case <-opCtx.Done():
				return fmt.Errorf("sign document: no answer: %w", opCtx.Err())
			case <-time.After(time.Hour):
				return fmt.Errorf("sign document: no answer after an hour: %w", errNoAnswer)
			}
		}}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "a hanging attempt", o) {
			return
		}
		if o.returned > deadline {
			t.Errorf("with Policy.Timeout = 10s, attempt 1 hung and Do returned at t=%v, want by the deadline: the context Do passes to each attempt must end at the deadline", o.returned)
		}
		for k, a := range o.attempts {
			if a.at >= deadline {
				t.Errorf("attempt %d started at t=%v, want no attempt at or after the 10s deadline", k+1, a.at)
				break
			}
		}
		if !errors.Is(o.err, context.DeadlineExceeded) {
			t.Errorf("Do(...) = %v, want an error wrapping context.DeadlineExceeded", o.err)
		}
	})
}

// ---------------------------------------------------------------------------
// cancellation

func checkCancel(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 5, Base: 10 * time.Second, Cap: time.Minute, Rand: seeded(seed, 1)}

	part(t, h, func() {
		h.Note("cancel during a wait: the dependency answers 503; the caller cancels while Do waits to retry")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error { return unavailable(k) }}
		call, o := c.goDo(t, ctx)
		fakeclock.Wait() // Do is now parked: waiting to retry, or returned
		if call.Returned() {
			if !requireAttempts(t, "cancel during a wait", o) {
				return
			}
			t.Errorf("Do returned %v after %d attempts without waiting to retry a 503; want it to be waiting when the caller cancels", o.err, len(o.attempts))
			return
		}
		h.Note("the caller cancels its context")
		cancel()
		fakeclock.Wait()
		stillWaiting := !call.Returned()
		if stillWaiting {
			h.Note("Do is still waiting")
		}
		call.Wait()
		if stillWaiting {
			t.Errorf("the caller cancelled at t=0s while Do waited to retry; Do returned at t=%v, want at once: wait on a timer and ctx.Done() together", o.returned)
		}
		if n := len(o.attempts); n != 1 {
			t.Errorf("Do made %d attempts, want 1: no attempt may start after the caller cancelled", n)
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("Do(...) after cancellation = %v, want an error wrapping context.Canceled", o.err)
		}
	})

	part(t, h, func() {
		h.Note("cancel during an attempt: the caller gives up while the first call is in flight, which then fails")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(opCtx context.Context, k int) error {
			if k == 1 {
				cancel()
				return fmt.Errorf("sign document: no answer: %w", context.Canceled)
			}
			return unavailable(k)
		}}
		o := c.do(t, ctx)
		if !requireAttempts(t, "cancel during an attempt", o) {
			return
		}
		if n := len(o.attempts); n != 1 {
			t.Errorf("the caller cancelled during attempt 1 and Do made %d attempts, want 1: a cancelled context is not a transient failure to retry", n)
		}
		if o.returned != 0 {
			t.Errorf("the caller cancelled during attempt 1 at t=0 and Do returned at t=%v, want at once", o.returned)
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("Do(...) = %v, want an error wrapping context.Canceled", o.err)
		}
	})

	part(t, h, func() {
		h.Note("already cancelled: Do is called with a context that is already cancelled")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error { return unavailable(k) }}
		o := c.do(t, ctx)
		if n := len(o.attempts); n != 0 {
			t.Errorf("Do with an already cancelled context made %d attempts, want 0", n)
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("Do with an already cancelled context = %v, want an error wrapping context.Canceled", o.err)
		}
	})
}

// ---------------------------------------------------------------------------
// permanent-errors

func checkPermanent(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: seeded(seed, 1)}
	h.Note("MaxAttempts = 3; each dependency below fails every call the same way")
	permanent := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity}
	for _, code := range permanent {
		c := &caller{h: h, actor: fmt.Sprintf("caller (%d)", code), r: tg.policy(cfg), script: func(context.Context, int) error { return status(code) }}
		o := c.do(t, context.Background())
		if !requireAttempts(t, fmt.Sprintf("always %d", code), o) {
			return
		}
		if n := len(o.attempts); n != 1 {
			t.Errorf("Do made %d attempts against an operation that fails with %d %s, want 1: it will fail the same way every time", n, code, http.StatusText(code))
		}
		var he *httpError
		if !errors.As(o.err, &he) || he.code != code || !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping the attempt's %d error", o.err, code)
		}
		if o.returned != 0 {
			t.Errorf("Do returned %v after a %d answer, want at once", o.returned, code)
		}
	}
	transient := []struct {
		name string
		err  func() error
	}{
		{"500", func() error { return status(http.StatusInternalServerError) }},
		{"502", func() error { return status(http.StatusBadGateway) }},
		{"503", func() error { return status(http.StatusServiceUnavailable) }},
		{"504", func() error { return status(http.StatusGatewayTimeout) }},
		{"408", func() error { return status(http.StatusRequestTimeout) }},
		{"429", func() error { return status(http.StatusTooManyRequests) }},
		{"no answer", noAnswer},
	}
	for _, tr := range transient {
		c := &caller{h: h, actor: "caller (" + tr.name + ")", r: tg.policy(cfg), script: func(context.Context, int) error { return tr.err() }}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "always "+tr.name, o) {
			return
		}
		if n := len(o.attempts); n != 3 {
			t.Errorf("Do made %d attempts against an operation that always fails with %q, want 3 (MaxAttempts): that failure is transient and must be retried", n, o.last())
		}
	}
}

// ---------------------------------------------------------------------------
// retry-after

func checkRetryAfter(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base = 100 * time.Millisecond
	cfg := Config[any]{MaxAttempts: 3, Base: base, Cap: time.Second, Rand: seeded(seed, 1)}
	hints := []struct {
		code  int
		after time.Duration
	}{
		{http.StatusTooManyRequests, 3 * time.Second},
		{http.StatusServiceUnavailable, 2 * time.Second},
	}
	for _, hint := range hints {
		part(t, h, func() {
			h.Note("attempt 1 gets %d with Retry-After: %v; attempt 2 succeeds. Base = %v", hint.code, hint.after, base)
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
				if k == 1 {
					return throttled(hint.code, hint.after)
				}
				return nil
			}}
			o := c.do(t, context.Background())
			if !requireAttempts(t, "Retry-After", o) {
				return
			}
			if len(o.attempts) < 2 {
				t.Errorf("Do made %d attempt after a %d with Retry-After: %v and returned %v, want a retry after the hint", len(o.attempts), hint.code, hint.after, o.err)
				return
			}
			gap := o.attempts[1].at - o.attempts[0].at
			switch {
			case gap < hint.after:
				t.Errorf("attempt 2 started %v after a %d that asked to retry after %v, want at least %v: the server said when it can take the call", gap, hint.code, hint.after, hint.after)
			case gap > hint.after+base:
				t.Errorf("attempt 2 started %v after a %d with Retry-After: %v, want no later than %v (the hint, or the hint plus the backoff)", gap, hint.code, hint.after, hint.after+base)
			}
			if o.err != nil {
				t.Errorf("Do(...) = %v, want nil (attempt 2 succeeds)", o.err)
			}
		})
	}

	part(t, h, func() {
		h.Note("Policy.Timeout = 10s; attempt 1 gets 429 with Retry-After: 1m")
		deadlined := cfg
		deadlined.Timeout = 10 * time.Second
		c := &caller{h: h, actor: "caller", r: tg.policy(deadlined), script: func(_ context.Context, k int) error {
			return throttled(http.StatusTooManyRequests, time.Minute)
		}}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "Retry-After past the deadline", o) {
			return
		}
		if n := len(o.attempts); n != 1 || o.returned != 0 {
			t.Errorf("a Retry-After of 1m ends past the 10s deadline, and Do made %d attempts and returned at t=%v; want 1 attempt and an immediate return: the hint never stretches the deadline", n, o.returned)
		}
		if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping context.DeadlineExceeded and the 429", o.err)
		}
	})
}

// ---------------------------------------------------------------------------
// retry-budget

func checkBudget(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const capacity, workers = 10, 20
	budget := tg.newBudget(capacity)
	stream := uint64(0)
	policy := func(maxAttempts int) Retrier {
		stream++
		return tg.policy(Config[any]{MaxAttempts: maxAttempts, Base: 100 * time.Millisecond, Cap: time.Second, Rand: seeded(seed, stream), Budget: budget})
	}
	ok := func(context.Context, int) error { return nil }
	always503 := func(_ context.Context, k int) error { return unavailable(k) }

	h.Note("a budget of %d tokens; %d calls succeed at once (the budget stays full)", capacity, workers)
	for range workers {
		c := &caller{r: policy(3), script: ok}
		if o := c.do(t, context.Background()); o.err != nil {
			t.Fatalf("Do(...) with a healthy dependency and a budget = %v, want nil", o.err)
		}
	}

	h.Note("the dependency goes down: %d workers call Do at once (MaxAttempts = 3), every call answers 503", workers)
	calls := make([]*suites.Call, workers)
	outcomes := make([]*outcome, workers)
	for i := range workers {
		var hist *suites.History
		if i < 2 {
			hist = h
		}
		c := &caller{h: hist, actor: fmt.Sprintf("worker %02d", i), r: policy(3), script: always503}
		calls[i], outcomes[i] = c.goDo(t, context.Background())
	}
	for _, call := range calls {
		call.Wait()
	}
	total, refused, slow := 0, 0, 0
	for i, o := range outcomes {
		if !requireAttempts(t, fmt.Sprintf("worker %02d", i), o) {
			return
		}
		total += len(o.attempts)
		if errors.Is(o.err, tg.errBudgetExhausted) {
			refused++
			if o.returned != o.lastAt() {
				slow++
			}
		}
	}
	h.Note("%d attempts in total; %d calls were refused a retry by the budget, %d of them only after waiting", total, refused, slow)
	if want := workers + capacity; total != want {
		t.Errorf("%d workers sharing a budget of %d tokens made %d attempts against a dependency that fails every call, want %d (%d first tries + %d retries); without a budget they would make %d", workers, capacity, total, want, workers, capacity, 3*workers)
	}
	if refused == 0 {
		t.Errorf("no Do returned an error wrapping %v, want the calls refused a retry by the budget to say so", tg.errBudgetExhausted)
	}
	if slow > 0 {
		t.Errorf("%d calls waited for their backoff and only then found the budget empty, want them to fail fast: ask the budget before sleeping", slow)
	}

	h.Note("the dependency recovers: 5 calls succeed at once, each refilling one token")
	for range 5 {
		c := &caller{r: policy(3), script: ok}
		if o := c.do(t, context.Background()); o.err != nil {
			t.Fatalf("Do(...) with a healthy dependency = %v, want nil", o.err)
		}
	}

	h.Note("the dependency fails again: one Do with MaxAttempts = 20")
	c := &caller{h: h, actor: "caller", r: policy(20), script: always503}
	o := c.do(t, context.Background())
	if !requireAttempts(t, "after the recovery", o) {
		return
	}
	if n := len(o.attempts); n != 6 {
		t.Errorf("after 5 successes refilled 5 tokens of an empty budget, Do made %d attempts, want 6 (1 try + 5 retries): each success puts one token back", n)
	}
	if !errors.Is(o.err, tg.errBudgetExhausted) || !errors.Is(o.err, o.last()) {
		t.Errorf("Do(...) = %v, want an error wrapping %v and the last attempt's error", o.err, tg.errBudgetExhausted)
	}
}
