package retrysuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/syncpoint"
)

// ---------------------------------------------------------------------------
// bounded-attempts

func checkAttempts(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 3, Base: 100 * time.Millisecond, Cap: time.Second, Rand: seeded(seed, 1)}

	part(t, h, func() {
		h.Note("MaxAttempts = 3; the dependency answers 503 to every call")
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(unavailable0)}
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
	})

	// MaxAttempts below 1 counts as 1, and so does the zero Policy, whose
	// Rand is nil: one attempt, never none and never a retry.
	for _, n := range []int{1, 0, -1} {
		part(t, h, func() {
			h.Note("MaxAttempts = %d (values below 1 count as 1); the dependency answers 503", n)
			one := cfg
			one.MaxAttempts = n
			c := &caller{h: h, actor: "caller", r: tg.policy(one), script: always(unavailable0)}
			o := c.do(t, context.Background())
			if requireAttempts(t, fmt.Sprintf("MaxAttempts = %d", n), o) {
				if got := len(o.attempts); got != 1 {
					t.Errorf("Do with MaxAttempts = %d made %d attempts, want 1 (the try, no retry)", n, got)
				}
				if !errors.Is(o.err, o.last()) {
					t.Errorf("Do with MaxAttempts = %d = %v, want an error wrapping the attempt's error %q", n, o.err, o.last())
				}
				if o.returned != 0 {
					t.Errorf("Do with MaxAttempts = %d returned after %v, want at once", n, o.returned)
				}
			}
			h.Note("MaxAttempts = %d; the dependency answers 200", n)
			c = &caller{h: h, actor: "caller", r: tg.policy(one), script: always(func() error { return nil })}
			o = c.do(t, context.Background())
			if len(o.attempts) != 1 || o.err != nil {
				t.Errorf("Do with MaxAttempts = %d against an operation that succeeds = %v after %d attempts, want nil after 1", n, o.err, len(o.attempts))
			}
		})
	}
	part(t, h, func() {
		h.Note("the zero Policy (no MaxAttempts, Base, Cap, Timeout, Rand or Budget); the dependency answers 503")
		c := &caller{h: h, actor: "caller", r: tg.policy(Config[any]{}), script: always(unavailable0)}
		o := c.do(t, context.Background())
		if requireAttempts(t, "the zero Policy", o) {
			if n := len(o.attempts); n != 1 || !errors.Is(o.err, o.last()) {
				t.Errorf("the zero Policy's Do against an operation that always fails = %v after %d attempts, want the attempt's error after 1: the zero value makes one attempt and never retries", o.err, n)
			}
		}
	})

	part(t, h, func() {
		h.Note("MaxAttempts = 5; the dependency fails twice, then succeeds")
		five := cfg
		five.MaxAttempts = 5
		c := &caller{h: h, actor: "caller", r: tg.policy(five), script: failThenSucceed(2, unavailable0)}
		o := c.do(t, context.Background())
		if requireAttempts(t, "fails twice, then succeeds", o) {
			if len(o.attempts) != 3 || o.err != nil {
				t.Errorf("Do with MaxAttempts = 5 against an operation that succeeds on attempt 3 = %v after %d attempts, want nil after 3", o.err, len(o.attempts))
			}
			if wait := o.returned - o.lastAt(); o.err == nil && wait != 0 {
				t.Errorf("Do returned %v after the attempt that succeeded, want at once", wait)
			}
		}
	})

	part(t, h, func() {
		h.Note("MaxAttempts = 3; the dependency fails twice, then succeeds")
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: failThenSucceed(2, unavailable0)}
		o := c.do(t, context.Background())
		if requireAttempts(t, "fails twice, then succeeds", o) {
			if len(o.attempts) != 3 || o.err != nil {
				t.Errorf("Do with MaxAttempts = 3 against an operation that succeeds on attempt 3 = %v after %d attempts, want nil after 3", o.err, len(o.attempts))
			}
		}

		h.Note("MaxAttempts = 3; the dependency fails three times, then would succeed")
		c = &caller{h: h, actor: "caller", r: tg.policy(cfg), script: failThenSucceed(3, unavailable0)}
		o = c.do(t, context.Background())
		if requireAttempts(t, "fails three times", o) {
			if len(o.attempts) != 3 || o.err == nil || !errors.Is(o.err, o.last()) {
				t.Errorf("Do with MaxAttempts = 3 against an operation that would succeed only on attempt 4 = %v after %d attempts, want the third attempt's error after 3", o.err, len(o.attempts))
			}
		}
	})
}

// ---------------------------------------------------------------------------
// capped-exponential

func checkCeiling(t *testing.T, h *suites.History, tg target) {
	const base, capd = 100 * time.Millisecond, 10 * time.Second
	cfg := Config[any]{MaxAttempts: 5, Base: base, Cap: capd}
	h.Note("Base = %v, Cap = %v; generators that always draw their largest (or smallest) value", base, capd)
	p := tg.policy(cfg)
	for n := 0; n <= 12; n++ {
		want := ceiling(base, capd, n)
		if got := ceilingOf(t, p, n); got != want {
			t.Errorf("Ceiling(%d) = %v, want %v = min(Cap, Base·2^%d)", n, got, want, n)
		}
		got := topOf(t, tg, cfg, n)
		h.Record("policy", fmt.Sprintf("Delay(%d) at the largest draw", n), fmt.Sprintf("%v (ceiling %v)", got, want))
		if got != want {
			switch {
			case got > capd:
				t.Errorf("Delay(%d) = %v, want <= Cap = %v: the cap bounds every delay", n, got, capd)
			default:
				t.Errorf("Delay(%d) = %v with a generator that always draws its largest value, want exactly %v = min(Cap, Base·2^%d): the window [0, ceiling] includes the ceiling", n, got, want, n)
			}
			return
		}
	}
	// A negative n counts as 0.
	for _, n := range []int{-1, -64} {
		if got := ceilingOf(t, p, n); got != base {
			t.Errorf("Ceiling(%d) = %v, want %v: a negative n counts as 0", n, got, base)
		}
		if got := topOf(t, tg, cfg, n); got != base {
			t.Errorf("Delay(%d) = %v at the largest draw, want %v: a negative n counts as 0", n, got, base)
		}
	}
	// Cap not a power-of-two multiple of Base, one past one, and Base above
	// or equal to Cap.
	for _, tc := range []struct {
		base, capd time.Duration
		want       []time.Duration
	}{
		{300 * time.Millisecond, time.Second, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, time.Second, time.Second}},
		{100 * time.Millisecond, 400*time.Millisecond + 1, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 400*time.Millisecond + 1}},
		{100 * time.Millisecond, 400*time.Millisecond - 1, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400*time.Millisecond - 1}},
		{2 * time.Second, time.Second, []time.Duration{time.Second, time.Second}},
		{time.Second, time.Second, []time.Duration{time.Second, time.Second}},
	} {
		c := Config[any]{MaxAttempts: 5, Base: tc.base, Cap: tc.capd}
		for n, want := range tc.want {
			if got := ceilingOf(t, tg.policy(c), n); got != want {
				t.Errorf("with Base = %v and Cap = %v, Ceiling(%d) = %v, want %v", tc.base, tc.capd, n, got, want)
			}
			if got := topOf(t, tg, c, n); got != want {
				t.Errorf("with Base = %v and Cap = %v, Delay(%d) = %v at the largest draw, want %v", tc.base, tc.capd, n, got, want)
			}
		}
	}
	// A zero or negative Base or Cap gives a ceiling of 0, for every n.
	for _, tc := range []struct{ base, capd time.Duration }{
		{0, capd}, {base, 0}, {0, 0}, {-base, capd}, {base, -capd},
	} {
		c := Config[any]{MaxAttempts: 5, Base: tc.base, Cap: tc.capd}
		for _, n := range []int{0, 1, 40, 62, 63, 64, 1000} {
			if got := ceilingOf(t, tg.policy(c), n); got != 0 {
				t.Errorf("with Base = %v and Cap = %v, Ceiling(%d) = %v, want 0 = min(Cap, Base·2^%d), and never negative", tc.base, tc.capd, n, got, n)
				break
			}
			if got := topOf(t, tg, c, n); got != 0 {
				t.Errorf("with Base = %v and Cap = %v, Delay(%d) = %v at the largest draw, want 0: the ceiling is 0", tc.base, tc.capd, n, got)
				break
			}
		}
	}
}

func checkSchedule(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base, capd, attempts = 100 * time.Millisecond, 2 * time.Second, 7
	mk := func(r *rand.Rand) Retrier {
		return tg.policy(Config[any]{MaxAttempts: attempts, Base: base, Cap: capd, Rand: r})
	}
	// A second policy with an identically seeded generator tells what the
	// first one's Delay(0), Delay(1), ... draw.
	want := make([]time.Duration, attempts-1)
	refRand := seeded(seed, 7)
	ref := mk(refRand)
	for n := range want {
		want[n] = delayOf(t, ref, n)
	}
	h.Note("MaxAttempts = %d, Base = %v, Cap = %v; for this seed Delay(0..%d) = %v", attempts, base, capd, attempts-2, want)
	r := seeded(seed, 7)
	c := &caller{h: h, actor: "caller", r: mk(r), script: always(unavailable0)}
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
		return
	}
	// The generator Do used must now be where the reference is: one draw
	// per wait, and nothing after the last attempt.
	if got, want := r.Uint64(), refRand.Uint64(); got != want {
		t.Errorf("after %d attempts and %d waits, Do's generator is not where %d calls of Delay leave an identically seeded one: Do drew something else from Policy.Rand (a delay for a wait it did not make?); it must draw Delay(k-1) for each wait and nothing else", attempts, attempts-1, attempts-1)
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
	// A window of four values, 0 to 3ns: each must come up about a quarter
	// of the time, the ceiling itself included.
	tiny := tg.policy(Config[any]{MaxAttempts: 5, Base: 3, Cap: 3, Rand: seeded(seed, 99)})
	for _, n := range []int{0, 5} {
		var counts [4]int
		for range draws {
			d := delayOf(t, tiny, n)
			if d < 0 || d > 3 {
				t.Fatalf("with Base = Cap = 3ns, Delay(%d) = %v, want within [0, 3ns]", n, d)
			}
			counts[d]++
		}
		h.Record("policy", fmt.Sprintf("%d draws of Delay(%d), Base = Cap = 3ns", draws, n), fmt.Sprintf("0ns: %d, 1ns: %d, 2ns: %d, 3ns: %d", counts[0], counts[1], counts[2], counts[3]))
		for v, k := range counts {
			if k < draws/4*8/10 || k > draws/4*12/10 {
				t.Errorf("with Base = Cap = 3ns, %d draws of Delay(%d) gave %vns %d times, want about %d (a quarter): full jitter is uniform over [0, ceiling], both ends included", draws, n, v, k, draws/4)
				return
			}
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
	for _, n := range []int{31, 32, 36, 37, 40, 62, 63, 64, 65, 100, 1000, math.MaxInt} {
		got := topOf(t, tg, Config[any]{MaxAttempts: 5, Base: base, Cap: capd}, n)
		h.Record("policy", fmt.Sprintf("Delay(%d) at the largest draw", n), got.String())
		if got != capd {
			wrong = append(wrong, fmt.Sprintf("Delay(%d) = %v", n, got))
		}
		if c := ceilingOf(t, top, n); c != capd {
			wrong = append(wrong, fmt.Sprintf("Ceiling(%d) = %v", n, c))
		}
	}
	// The largest Cap a Duration holds: the ceiling reaches it without
	// wrapping, and so does the draw.
	huge := Config[any]{MaxAttempts: 5, Base: time.Second, Cap: math.MaxInt64}
	for _, n := range []int{33, 34, 62, 63, 64} {
		want := ceiling(time.Second, math.MaxInt64, n)
		if got := ceilingOf(t, tg.policy(huge), n); got != want {
			wrong = append(wrong, fmt.Sprintf("with Base = 1s and Cap = the largest Duration, Ceiling(%d) = %v (want %v)", n, got, want))
		}
		if got := topOf(t, tg, huge, n); got != want {
			wrong = append(wrong, fmt.Sprintf("with Base = 1s and Cap = the largest Duration, Delay(%d) = %v at the largest draw (want %v)", n, got, want))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("with a generator that always draws its largest value, %s, want %v (Cap) each time: Base·2ⁿ overflows an int64 from n = 37 on, so the ceiling must be clamped to Cap before it is computed", strings.Join(wrong, ", "), capd)
	}
	// Every n up to past 63, for odd Bases too, under the largest Cap: a
	// shift that wraps can land on a positive number (5ns·2⁶² wraps to
	// 2⁶²), so a sign test does not catch every overflow.
	var swept []string
	for _, b := range []time.Duration{1, 3, 5, 7, 999_999_937, 100 * time.Millisecond, time.Second} {
		p := tg.policy(Config[any]{MaxAttempts: 5, Base: b, Cap: math.MaxInt64})
		for n := 0; n <= 70; n++ {
			if got, want := ceilingOf(t, p, n), ceiling(b, math.MaxInt64, n); got != want {
				swept = append(swept, fmt.Sprintf("with Base = %v, Ceiling(%d) = %v, want %v", b, n, got, want))
				break
			}
		}
	}
	if len(swept) > 0 {
		h.Record("policy", "Ceiling(0..70) with Cap = the largest Duration", strings.Join(swept, "; "))
		t.Errorf("with Cap = the largest Duration, %s: Ceiling(n) is exactly min(Cap, Base·2ⁿ), and a shift or product that overflows can wrap to any value, a positive one too, so compare before you multiply", strings.Join(swept, "; "))
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
		ctx     time.Duration // the context's deadline; 0: none
	}{
		{"Policy.Timeout = 10s", deadline, 0},
		{"a context with a 10s deadline", 0, deadline},
		{"Policy.Timeout = 10s and a context with a 1m deadline", deadline, time.Minute},
		{"Policy.Timeout = 1m and a context with a 10s deadline", time.Minute, deadline},
	}
	for i, v := range variants {
		part(t, h, func() {
			h.Note("deadline from %s; MaxAttempts = 20, Base = 1s, Cap = 8s; the dependency answers 503 to every call", v.name)
			ctx, cancel := withDeadline(v.ctx)
			defer cancel()
			cfg := Config[any]{MaxAttempts: 20, Base: time.Second, Cap: 8 * time.Second, Timeout: v.timeout, Rand: seeded(seed, uint64(i))}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(unavailable0)}
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

	// Both deadlines set, in both orders: the earlier one decides. A wait
	// of 500ms fits before a 1s deadline; a wait of 2s does not, whichever
	// of the two settings says 1s.
	for _, v := range []struct {
		name         string
		timeout, ctx time.Duration
	}{
		{"a context with a 1s deadline and Policy.Timeout = 10s", 10 * time.Second, time.Second},
		{"Policy.Timeout = 1s and a context with a 10s deadline", time.Second, 10 * time.Second},
	} {
		part(t, h, func() {
			h.Note("%s; attempt 1 gets 429 with Retry-After: 500ms, attempt 2 gets 429 with Retry-After: 2s", v.name)
			ctx, cancel := withDeadline(v.ctx)
			defer cancel()
			cfg := Config[any]{MaxAttempts: 5, Base: time.Millisecond, Cap: time.Millisecond, Timeout: v.timeout, Rand: seeded(seed, 20)}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
				if k == 1 {
					return throttled(http.StatusTooManyRequests, 500*time.Millisecond)
				}
				return throttled(http.StatusTooManyRequests, 2*time.Second)
			}}
			o := c.do(t, ctx)
			if !requireAttempts(t, v.name, o) {
				return
			}
			if n := len(o.attempts); n != 2 || o.returned != o.lastAt() || o.lastAt() != 500*time.Millisecond {
				t.Errorf("with %s, Do made %d attempts (the last at t=%v) and returned at t=%v, want attempt 2 at t=500ms and Do back at once then: the earlier deadline, 1s, is the call's deadline, and a 2s wait would cross it", v.name, n, o.lastAt(), o.returned)
			}
			if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
				t.Errorf("with %s, Do(...) = %v, want an error wrapping context.DeadlineExceeded and the last attempt's error %q", v.name, o.err, o.last())
			}
		})
	}

	// A wait that would end exactly at the deadline reaches it; one that
	// ends a nanosecond before it does not.
	for _, v := range []struct {
		name         string
		timeout, ctx time.Duration
	}{
		{"Policy.Timeout = 1s", time.Second, 0},
		{"a context with a 1s deadline", 0, time.Second},
	} {
		part(t, h, func() {
			h.Note("%s; Base = Cap = 1s and a generator that always draws its largest value: the first wait is exactly 1s", v.name)
			ctx, cancel := withDeadline(v.ctx)
			defer cancel()
			cfg := Config[any]{MaxAttempts: 5, Base: time.Second, Cap: time.Second, Timeout: v.timeout, Rand: rand.New(maxDraws)}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(unavailable0)}
			o := c.do(t, ctx)
			if !requireAttempts(t, v.name, o) {
				return
			}
			if n := len(o.attempts); n != 1 || o.returned != 0 {
				t.Errorf("with %s, the first wait of exactly 1s would end at the deadline, and Do made %d attempts and returned at t=%v; want 1 attempt and an immediate return: a wait that reaches the deadline is not made", v.name, n, o.returned)
			}
			if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
				t.Errorf("with %s, Do(...) = %v, want an error wrapping context.DeadlineExceeded and the 503", v.name, o.err)
			}

			h.Note("%s; Base = Cap = 1s - 1ns, the largest draw: the first wait ends 1ns before the deadline", v.name)
			ctx, cancel = withDeadline(v.ctx)
			defer cancel()
			cfg.Base, cfg.Cap = time.Second-1, time.Second-1
			c = &caller{h: h, actor: "caller", r: tg.policy(cfg), script: failThenSucceed(1, unavailable0)}
			o = c.do(t, ctx)
			if len(o.attempts) != 2 || o.err != nil || o.lastAt() != time.Second-1 {
				t.Errorf("with %s, a first wait of 1s - 1ns ends before the deadline, and Do = %v after %d attempts (the last at t=%v); want attempt 2 at t=999.999999ms and nil", v.name, o.err, len(o.attempts), o.lastAt())
			}
		})
	}

	// An attempt that ignores its context and overruns the deadline: even a
	// wait of zero would start the next attempt after the deadline.
	part(t, h, func() {
		h.Note("Policy.Timeout = 1s; Base = 0, so every wait is 0; attempt 1 ignores its context, takes 2s and answers 503")
		cfg := Config[any]{MaxAttempts: 5, Base: 0, Cap: time.Second, Timeout: time.Second, Rand: seeded(seed, 21)}
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
			if k == 1 {
				time.Sleep(2 * time.Second)
			}
			return unavailable(k)
		}}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "an attempt that overruns the deadline", o) {
			return
		}
		if n := len(o.attempts); n != 1 || o.returned != 2*time.Second {
			t.Errorf("attempt 1 overran the 1s deadline and answered 503 at t=2s; Do made %d attempts and returned at t=%v, want 1 attempt and Do back at t=2s: no attempt starts at or after the deadline", n, o.returned)
		}
		if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping context.DeadlineExceeded and the 503", o.err)
		}
	})

	// No Timeout and no context deadline: no deadline at all, however long
	// the waits. Virtual time is free, so the waits run to days. A negative
	// Timeout is no limit either, like 0, not a deadline already past.
	for _, timeout := range []time.Duration{0, -time.Second} {
		part(t, h, func() {
			name := "no Policy.Timeout"
			if timeout != 0 {
				name = fmt.Sprintf("Policy.Timeout = %v", timeout)
			}
			h.Note("%s, no context deadline; MaxAttempts = 8, Base = 1h, Cap = 48h, the largest draw: the waits add up to more than four days", name)
			cfg := Config[any]{MaxAttempts: 8, Base: time.Hour, Cap: 48 * time.Hour, Timeout: timeout, Rand: rand.New(maxDraws)}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: failThenSucceed(7, unavailable0)}
			o := c.do(t, context.Background())
			if !requireAttempts(t, name, o) {
				return
			}
			want := []time.Duration{0, time.Hour, 3 * time.Hour, 7 * time.Hour, 15 * time.Hour, 31 * time.Hour, 63 * time.Hour, 111 * time.Hour}
			var got []time.Duration
			for _, a := range o.attempts {
				got = append(got, a.at)
			}
			if o.err != nil || !slices.Equal(got, want) {
				t.Errorf("with %s and no context deadline, Do = %v with attempts at %v, want nil with attempts at %v: a Timeout of zero or less means no limit other than the context's deadline, and the context has none", name, o.err, got, want)
			}
		})
	}
}

// withDeadline returns a context that ends d from now, or one that never
// ends when d is 0, and its cancel function.
func withDeadline(d time.Duration) (context.Context, context.CancelFunc) {
	if d == 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), d)
}

func checkAttemptContext(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)

	// An attempt that hangs must be cut off at the deadline: the operation
	// waits for its context, or for a day if the context never ends.
	for _, hang := range []int{1, 2} {
		part(t, h, func() {
			h.Note("Policy.Timeout = 1s; attempt 1 gets 429 with Retry-After: 600ms unless it is the one that hangs; attempt %d hangs until its context ends", hang)
			cfg := Config[any]{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Timeout: time.Second, Rand: seeded(seed, 9)}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(opCtx context.Context, k int) error {
				if k == hang {
					return hangUntilDone(opCtx)
				}
				return throttled(http.StatusTooManyRequests, 600*time.Millisecond)
			}}
			o := c.do(t, context.Background())
			if !requireAttempts(t, "a hanging attempt", o) {
				return
			}
			if len(o.attempts) < hang {
				t.Errorf("Do made %d attempts and returned %v, want attempt %d to be made", len(o.attempts), o.err, hang)
				return
			}
			if o.returned != time.Second {
				t.Errorf("with Policy.Timeout = 1s, attempt %d (started at t=%v) hung and Do returned at t=%v, want at t=1s: the context of every attempt ends at the deadline of the whole call, not Timeout after the attempt started", hang, o.lastAt(), o.returned)
			}
			if !errors.Is(o.err, context.DeadlineExceeded) {
				t.Errorf("Do(...) = %v, want an error wrapping context.DeadlineExceeded", o.err)
			}
		})
	}

	// Every attempt's context carries the call's deadline: the earlier of
	// Timeout and the context's, in both orders.
	for _, v := range []struct {
		name         string
		timeout, ctx time.Duration
		want         time.Duration
	}{
		{"Policy.Timeout = 1s", time.Second, 0, time.Second},
		{"a context with a 1s deadline", 0, time.Second, time.Second},
		{"Policy.Timeout = 1s and a context with a 10s deadline", time.Second, 10 * time.Second, time.Second},
		{"a context with a 1s deadline and Policy.Timeout = 10s", 10 * time.Second, time.Second, time.Second},
	} {
		part(t, h, func() {
			h.Note("%s; attempts 1 and 2 get 429 with Retry-After: 300ms, attempt 3 succeeds; each attempt reports its context's deadline", v.name)
			ctx, cancel := withDeadline(v.ctx)
			defer cancel()
			cfg := Config[any]{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Timeout: v.timeout, Rand: seeded(seed, 10)}
			start := time.Now()
			var bad []string
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(opCtx context.Context, k int) error {
				d, ok := opCtx.Deadline()
				if !ok || d.Sub(start) != v.want {
					at := "none"
					if ok {
						at = "t=" + d.Sub(start).String()
					}
					bad = append(bad, fmt.Sprintf("attempt %d's context ends at %s", k, at))
				}
				if k <= 2 {
					return throttled(http.StatusTooManyRequests, 300*time.Millisecond)
				}
				return nil
			}}
			o := c.do(t, ctx)
			if !requireAttempts(t, v.name, o) {
				return
			}
			if len(bad) > 0 {
				t.Errorf("with %s, %s; want every attempt's context to end at t=%v, the deadline of the whole call", v.name, strings.Join(bad, ", "), v.want)
			}
			if o.err != nil || len(o.attempts) != 3 {
				t.Errorf("with %s, Do = %v after %d attempts, want nil after 3", v.name, o.err, len(o.attempts))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// cancellation

func checkCancel(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 5, Base: 10 * time.Second, Cap: time.Minute, Rand: seeded(seed, 1)}

	// The caller cancels during a wait: after the first attempt, or 100ms
	// into the second wait. Each wait it cancels in lasts at least 1s (a
	// Retry-After hint), whatever the backoff draws.
	for _, at := range []int{1, 2} {
		part(t, h, func() {
			p := cfg
			if at == 1 {
				h.Note("cancel during wait 1: attempt 1 gets 429 with Retry-After: 1s; the caller cancels 100ms into the wait")
			} else {
				h.Note("cancel during wait 2: attempt 1 gets 503 (Base = Cap = 1ms), attempt 2 gets 429 with Retry-After: 1s; the caller cancels 100ms into wait 2")
				p.Base, p.Cap = time.Millisecond, time.Millisecond
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &caller{h: h, actor: "caller", r: tg.policy(p), script: func(_ context.Context, k int) error {
				if at == 2 && k == 1 {
					return unavailable(k)
				}
				return throttled(http.StatusTooManyRequests, time.Second)
			}}
			begin := time.Now()
			call, o := c.goDo(t, ctx)
			fakeclock.Wait() // Do is now parked: waiting to retry, or returned
			if at == 2 {
				fakeclock.Advance(time.Millisecond) // past the first wait, at most 1ms
			}
			fakeclock.Advance(100 * time.Millisecond)
			if call.Returned() {
				if !requireAttempts(t, "cancel during a wait", o) {
					return
				}
				t.Errorf("Do returned %v after %d attempts without waiting the 1s the server asked for; want it to be waiting when the caller cancels", o.err, len(o.attempts))
				return
			}
			h.Note("the caller cancels its context")
			cancelledAt := time.Since(begin)
			cancel()
			fakeclock.Wait()
			stillWaiting := !call.Returned()
			if stillWaiting {
				h.Note("Do is still waiting")
			}
			call.Wait()
			if n := len(o.attempts); n != at {
				t.Errorf("Do made %d attempts, want %d: no attempt may start after the caller cancelled", n, at)
			}
			if stillWaiting || o.returned != cancelledAt {
				t.Errorf("the caller cancelled at t=%v while Do waited to retry; Do returned at t=%v, want at once: wait on a timer and ctx.Done() together", cancelledAt, o.returned)
			}
			if !errors.Is(o.err, context.Canceled) || !errors.Is(o.err, o.last()) {
				t.Errorf("Do(...) after cancellation = %v, want an error wrapping context.Canceled and the last attempt's error %q", o.err, o.last())
			}
		})
	}

	// The caller gives up during an attempt, which then fails: with an
	// error of its own cancellation, or with a 503 it got anyway. Either way
	// no retry is due, so Do takes no token and draws no delay.
	for _, v := range []struct {
		name string
		err  func() error
	}{
		{"a wrapped context.Canceled", func() error { return fmt.Errorf("sign document: no answer: %w", context.Canceled) }},
		{"503", unavailable0},
	} {
		part(t, h, func() {
			h.Note("cancel during an attempt: the caller gives up while attempt 1 is in flight, which then fails with %s; a budget of 5 tokens", v.name)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := tg.newBudget(5)
			counting := &countingSource{src: rand.NewPCG(uint64(seed), 3)}
			c := &caller{h: h, actor: "caller", r: tg.policy(Config[any]{MaxAttempts: 5, Base: 10 * time.Second, Cap: time.Minute, Rand: rand.New(counting), Budget: b}), script: func(opCtx context.Context, k int) error {
				if k == 1 {
					cancel()
				}
				return v.err()
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
			if !errors.Is(o.err, context.Canceled) || !errors.Is(o.err, o.last()) {
				t.Errorf("Do(...) = %v, want an error wrapping context.Canceled and the attempt's error %q", o.err, o.last())
			}
			if n := tokens(t, b); n != 5 {
				t.Errorf("the caller cancelled during attempt 1 (answered %s) and the budget holds %d tokens afterwards, want 5: a retry that is not made takes no token (check ctx after every attempt, before anything else)", v.name, n)
			}
			if counting.n != 0 {
				t.Errorf("the caller cancelled during attempt 1 (answered %s) and Do drew %d values from Policy.Rand, want none: there is no wait to draw a delay for", v.name, counting.n)
			}
		})
	}

	// The caller gives up during an attempt that then succeeds: the work
	// is done, so Do says so, and the success puts its token back.
	part(t, h, func() {
		h.Note("cancel during an attempt that succeeds: the caller gives up while attempt 1 is in flight, which then answers 200 OK; a budget of 5 tokens, one of them spent")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := tg.newBudget(5)
		budgetOf(t, b).Withdraw()
		c := &caller{h: h, actor: "caller", r: tg.policy(Config[any]{MaxAttempts: 5, Base: 10 * time.Second, Cap: time.Minute, Rand: seeded(seed, 4), Budget: b}), script: func(_ context.Context, k int) error {
			cancel()
			return nil
		}}
		o := c.do(t, ctx)
		if !requireAttempts(t, "cancel during an attempt that succeeds", o) {
			return
		}
		if n := len(o.attempts); n != 1 || o.err != nil {
			t.Errorf("the caller cancelled during attempt 1, which then succeeded, and Do = %v after %d attempts, want nil after 1: an attempt that succeeded is a success, whatever happened to the context meanwhile", o.err, n)
		}
		if n := tokens(t, b); n != 5 {
			t.Errorf("the caller cancelled during attempt 1, which then succeeded, and the budget holds %d tokens afterwards, want 5: a successful attempt puts one token back, even when the context is done by then", n)
		}
	})

	// A context that is done before Do is called: cancelled, or past its
	// deadline (a day ago, as far as the caller is concerned).
	for _, v := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"already past its deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-24*time.Hour))
		}, context.DeadlineExceeded},
	} {
		part(t, h, func() {
			h.Note("Do is called with a context that is %s", v.name)
			ctx, cancel := v.ctx()
			defer cancel()
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(unavailable0)}
			o := c.do(t, ctx)
			if n := len(o.attempts); n != 0 {
				t.Errorf("Do with a context %s made %d attempts, want 0", v.name, n)
			}
			if !errors.Is(o.err, v.want) {
				t.Errorf("Do with a context %s = %v, want an error wrapping %v", v.name, o.err, v.want)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// permanent-errors

func checkPermanent(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	cfg := Config[any]{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: seeded(seed, 1)}
	h.Note("MaxAttempts = 3; each dependency below fails every call the same way")
	permanent := []struct {
		name string
		err  func() error
	}{}
	for _, code := range []int{400, 401, 403, 404, 422, 407, 409, 428, 430, 499, 600, 304} {
		permanent = append(permanent, struct {
			name string
			err  func() error
		}{fmt.Sprint(code), func() error { return status(code) }})
	}
	permanent = append(permanent, []struct {
		name string
		err  func() error
	}{
		{"400 wrapped twice", func() error { return fmt.Errorf("worker: %w", status(http.StatusBadRequest)) }},
		{"a wrapped context.Canceled (an inner request was cancelled; the caller's context is live)", func() error { return fmt.Errorf("post /send: %w", context.Canceled) }},
		{"a 503 joined with context.Canceled", func() error { return errors.Join(status(http.StatusServiceUnavailable), context.Canceled) }},
	}...)
	for _, p := range permanent {
		c := &caller{h: h, actor: "caller (" + p.name + ")", r: tg.policy(cfg), script: always(p.err)}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "always "+p.name, o) {
			return
		}
		if n := len(o.attempts); n != 1 {
			t.Errorf("Do made %d attempts against an operation that fails with %s (%q), want 1: it is not retryable", n, p.name, o.last())
		}
		if !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping the attempt's error %q", o.err, o.last())
		}
		if o.returned != 0 {
			t.Errorf("Do returned %v after a %s answer, want at once", o.returned, p.name)
		}
	}
	transient := []struct {
		name string
		err  func() error
	}{
		{"no answer", noAnswer},
		{"an inner timeout (a wrapped context.DeadlineExceeded; the caller's context is live)", func() error {
			return fmt.Errorf("post /send: %w", context.DeadlineExceeded)
		}},
		{"503 wrapped twice", func() error { return fmt.Errorf("worker: %w", status(http.StatusServiceUnavailable)) }},
	}
	for _, code := range []int{500, 501, 502, 503, 504, 505, 507, 511, 599, 408, 429} {
		transient = append(transient, struct {
			name string
			err  func() error
		}{fmt.Sprint(code), func() error { return status(code) }})
	}
	for _, tr := range transient {
		c := &caller{h: h, actor: "caller (" + tr.name + ")", r: tg.policy(cfg), script: always(tr.err)}
		o := c.do(t, context.Background())
		if !requireAttempts(t, "always "+tr.name, o) {
			return
		}
		if n := len(o.attempts); n != 3 {
			t.Errorf("Do made %d attempts against an operation that always fails with %s (%q), want 3 (MaxAttempts): that failure is transient and must be retried", n, tr.name, o.last())
		}
	}
}

// ---------------------------------------------------------------------------
// retry-after

func checkRetryAfter(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const base = 100 * time.Millisecond
	cfg := Config[any]{MaxAttempts: 3, Base: base, Cap: time.Second, Rand: seeded(seed, 1)}
	// The hint is above Cap, so the wait is the hint exactly, whatever the
	// backoff draws; the hint is not capped. The last one is days long, and
	// there is no deadline to stop it.
	hints := []struct {
		code  int
		after time.Duration
		wrap  bool
	}{
		{http.StatusTooManyRequests, 3 * time.Second, false},
		{http.StatusServiceUnavailable, 2 * time.Second, true},
		{http.StatusTooManyRequests, 72 * time.Hour, false},
	}
	for _, hint := range hints {
		part(t, h, func() {
			h.Note("attempt 1 gets %d with Retry-After: %v; attempt 2 succeeds. Base = %v, Cap = 1s, no deadline", hint.code, hint.after, base)
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error {
				if k == 1 {
					if hint.wrap {
						return fmt.Errorf("worker: %w", throttled(hint.code, hint.after))
					}
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
			case gap != hint.after:
				t.Errorf("attempt 2 started %v after a %d with Retry-After: %v, want exactly %v: the wait is max(Delay(0), hint), and Delay(0) is at most Base", gap, hint.code, hint.after, hint.after)
			}
			if o.err != nil {
				t.Errorf("Do(...) = %v, want nil (attempt 2 succeeds)", o.err)
			}
		})
	}

	// A hint below the backoff, zero or negative: the wait is the backoff.
	// With the largest draw, Delay(0) is Base exactly.
	for _, after := range []time.Duration{time.Nanosecond, 0, -5 * time.Second} {
		part(t, h, func() {
			h.Note("attempt 1 gets 503 with Retry-After: %v; attempt 2 succeeds. Base = %v and the largest draw: Delay(0) = %v", after, base, base)
			top := cfg
			top.Rand = rand.New(maxDraws)
			c := &caller{h: h, actor: "caller", r: tg.policy(top), script: func(_ context.Context, k int) error {
				if k == 1 {
					return throttled(http.StatusServiceUnavailable, after)
				}
				return nil
			}}
			o := c.do(t, context.Background())
			if !requireAttempts(t, "a short hint", o) {
				return
			}
			if len(o.attempts) != 2 || o.err != nil {
				t.Errorf("Do = %v after %d attempts, want nil after 2", o.err, len(o.attempts))
				return
			}
			if gap := o.attempts[1].at - o.attempts[0].at; gap != base {
				t.Errorf("attempt 2 started %v after a 503 with Retry-After: %v, want %v = Delay(0) at the largest draw: the wait is max(Delay(0), hint), and only a positive hint counts", gap, after, base)
			}
		})
	}

	for _, v := range []struct {
		name         string
		timeout, ctx time.Duration
	}{
		{"Policy.Timeout = 10s", 10 * time.Second, 0},
		{"a context with a 10s deadline", 0, 10 * time.Second},
	} {
		part(t, h, func() {
			h.Note("%s; attempt 1 gets 429 with Retry-After: 1m", v.name)
			ctx, cancel := withDeadline(v.ctx)
			defer cancel()
			deadlined := cfg
			deadlined.Timeout = v.timeout
			c := &caller{h: h, actor: "caller", r: tg.policy(deadlined), script: always(func() error {
				return throttled(http.StatusTooManyRequests, time.Minute)
			})}
			o := c.do(t, ctx)
			if !requireAttempts(t, "Retry-After past the deadline", o) {
				return
			}
			if n := len(o.attempts); n != 1 || o.returned != 0 {
				t.Errorf("with %s, a Retry-After of 1m ends past the deadline, and Do made %d attempts and returned at t=%v; want 1 attempt and an immediate return: the hint never stretches the deadline", v.name, n, o.returned)
			}
			if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
				t.Errorf("with %s, Do(...) = %v, want an error wrapping context.DeadlineExceeded and the 429", v.name, o.err)
			}

			// A hint that ends exactly at the deadline reaches it; one
			// that ends a nanosecond earlier does not.
			for _, after := range []time.Duration{10 * time.Second, 10*time.Second - 1} {
				h.Note("%s; attempt 1 gets 429 with Retry-After: %v; attempt 2 succeeds", v.name, after)
				ctx, cancel := withDeadline(v.ctx)
				defer cancel()
				c := &caller{h: h, actor: "caller", r: tg.policy(deadlined), script: func(_ context.Context, k int) error {
					if k == 1 {
						return throttled(http.StatusTooManyRequests, after)
					}
					return nil
				}}
				o := c.do(t, ctx)
				if !requireAttempts(t, "Retry-After at the deadline", o) {
					return
				}
				switch {
				case after == 10*time.Second && (len(o.attempts) != 1 || o.returned != 0 || !errors.Is(o.err, context.DeadlineExceeded)):
					t.Errorf("with %s, a Retry-After of 10s ends exactly at the deadline, and Do = %v after %d attempts, returning at t=%v; want an error wrapping context.DeadlineExceeded after 1 attempt, at once: a wait that reaches the deadline is not made", v.name, o.err, len(o.attempts), o.returned)
				case after < 10*time.Second && (len(o.attempts) != 2 || o.err != nil || o.lastAt() != after):
					t.Errorf("with %s, a Retry-After of %v ends 1ns before the deadline, and Do = %v after %d attempts (the last at t=%v); want nil after 2, the second at t=%v", v.name, after, o.err, len(o.attempts), o.lastAt(), after)
				}
			}
		})
	}
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
	always503 := always(unavailable0)

	h.Note("a budget of %d tokens; %d calls succeed at once (the budget stays full)", capacity, workers)
	if n := tokens(t, budget); n != capacity {
		t.Fatalf("NewBudget(%d).Tokens() = %d, want %d: a budget starts full", capacity, n, capacity)
	}
	for range workers {
		c := &caller{r: policy(3), script: ok}
		if o := c.do(t, context.Background()); o.err != nil {
			t.Fatalf("Do(...) with a healthy dependency and a budget = %v, want nil", o.err)
		}
	}
	if n := tokens(t, budget); n != capacity {
		t.Errorf("after %d successes, a budget of %d holds %d tokens, want %d: a deposit never takes it above its capacity", workers, capacity, n, capacity)
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

	// Tokens come back with successes only, never with time.
	h.Note("30 days pass without a call; then one Do with MaxAttempts = 20 against a failing dependency")
	fakeclock.Advance(30 * 24 * time.Hour)
	if n := tokens(t, budget); n != 0 {
		t.Errorf("an empty budget holds %d tokens 30 days later with no success in between, want 0: only a successful attempt puts a token back", n)
	}
	c = &caller{h: h, actor: "caller", r: policy(20), script: always503}
	o = c.do(t, context.Background())
	if n := len(o.attempts); n != 1 || !errors.Is(o.err, tg.errBudgetExhausted) {
		t.Errorf("with an empty budget, 30 days later, Do = %v after %d attempts, want an error wrapping %v after 1", o.err, n, tg.errBudgetExhausted)
	}
}

func checkBudgetAccounting(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	const capacity = 5
	scenarios := []struct {
		name    string
		cfg     Config[any]
		ctx     time.Duration // the context's deadline; 0: none
		script  func(context.Context, int) error
		attempt int // attempts Do must make
		want    int // tokens left
		wraps   error
	}{
		{"MaxAttempts = 2; every call answers 503: one retry", Config[any]{MaxAttempts: 2}, 0, always(unavailable0), 2, capacity - 1, nil},
		{"MaxAttempts = 5; 503, 503, then 200: two retries, one success", Config[any]{MaxAttempts: 5}, 0, failThenSucceed(2, unavailable0), 3, capacity - 1, nil},
		{"MaxAttempts = 5; the first call succeeds (the budget is full)", Config[any]{MaxAttempts: 5}, 0, always(func() error { return nil }), 1, capacity, nil},
		{"MaxAttempts = 5; 400: not retryable", Config[any]{MaxAttempts: 5}, 0, always(func() error { return status(http.StatusBadRequest) }), 1, capacity, nil},
		{"MaxAttempts = 1; 503: no retry allowed", Config[any]{MaxAttempts: 1}, 0, always(unavailable0), 1, capacity, nil},
		{"Policy.Timeout = 1s; 429 with Retry-After: 5s: the deadline forbids the retry", Config[any]{MaxAttempts: 5, Timeout: time.Second}, 0, always(func() error { return throttled(http.StatusTooManyRequests, 5*time.Second) }), 1, capacity, context.DeadlineExceeded},
		{"a context with a 1s deadline; 429 with Retry-After: 5s", Config[any]{MaxAttempts: 5}, time.Second, always(func() error { return throttled(http.StatusTooManyRequests, 5*time.Second) }), 1, capacity, context.DeadlineExceeded},
	}
	for i, sc := range scenarios {
		part(t, h, func() {
			h.Note("a budget of %d tokens; %s", capacity, sc.name)
			b := tg.newBudget(capacity)
			cfg := sc.cfg
			cfg.Base, cfg.Cap, cfg.Rand, cfg.Budget = 10*time.Millisecond, 100*time.Millisecond, seeded(seed, uint64(i)), b
			ctx, cancel := withDeadline(sc.ctx)
			defer cancel()
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: sc.script}
			o := c.do(t, ctx)
			if !requireAttempts(t, sc.name, o) {
				return
			}
			if n := len(o.attempts); n != sc.attempt {
				t.Errorf("%s: Do made %d attempts, want %d", sc.name, n, sc.attempt)
			}
			if n := tokens(t, b); n != sc.want {
				t.Errorf("%s: the budget of %d holds %d tokens after Do, want %d: each retry made takes one token just before its wait, after every other check, and each success puts one back, up to the capacity", sc.name, capacity, n, sc.want)
			}
			if sc.wraps != nil && !errors.Is(o.err, sc.wraps) {
				t.Errorf("%s: Do(...) = %v, want an error wrapping %v", sc.name, o.err, sc.wraps)
			}
		})
	}

	// The exact limit and one past it: a budget of 1 pays for one retry;
	// an empty one pays for none. When the deadline forbids the retry too,
	// the deadline is checked first.
	part(t, h, func() {
		for _, capa := range []int{1, 0} {
			h.Note("a budget of %d; MaxAttempts = 5; every call answers 503", capa)
			b := tg.newBudget(capa)
			if n := tokens(t, b); n != capa {
				t.Errorf("NewBudget(%d).Tokens() = %d, want %d: a budget starts full", capa, n, capa)
			}
			cfg := Config[any]{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: seeded(seed, 40), Budget: b}
			c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(unavailable0)}
			o := c.do(t, context.Background())
			if n := len(o.attempts); n != capa+1 || !errors.Is(o.err, tg.errBudgetExhausted) || !errors.Is(o.err, o.last()) || o.returned != o.lastAt() {
				t.Errorf("with a budget of %d, Do = %v after %d attempts, returning %v after the last; want an error wrapping %v and the last 503 after %d attempts, at once", capa, o.err, n, o.returned-o.lastAt(), tg.errBudgetExhausted, capa+1)
			}
		}
		h.Note("an empty budget; Policy.Timeout = 1s; 429 with Retry-After: 5s: both the deadline and the budget forbid the retry")
		cfg := Config[any]{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Timeout: time.Second, Rand: seeded(seed, 41), Budget: tg.newBudget(0)}
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: always(func() error { return throttled(http.StatusTooManyRequests, 5*time.Second) })}
		o := c.do(t, context.Background())
		if !errors.Is(o.err, context.DeadlineExceeded) || !errors.Is(o.err, o.last()) {
			t.Errorf("with an empty budget and a Retry-After past the deadline, Do(...) = %v, want an error wrapping context.DeadlineExceeded and the 429: the deadline is checked before the budget", o.err)
		}
	})

	// A negative capacity counts as 0: a budget that pays for no retry,
	// never a negative count of tokens.
	part(t, h, func() {
		h.Note("NewBudget(-3): an empty budget")
		b := budgetOf(t, tg.newBudget(-3))
		if n := b.Tokens(); n != 0 {
			t.Errorf("NewBudget(-3).Tokens() = %d, want 0: a negative capacity counts as 0", n)
		}
		b.Deposit()
		if ok, n := b.Withdraw(), b.Tokens(); ok || n != 0 {
			t.Errorf("NewBudget(-3), then Deposit and Withdraw: Withdraw() = %v, Tokens() = %d, want false and 0: a negative capacity counts as 0, and a Deposit never fills a budget above its capacity", ok, n)
		}
	})

	// The Budget's own methods.
	part(t, h, func() {
		h.Note("NewBudget(3): Withdraw four times, then Deposit five times")
		b := budgetOf(t, tg.newBudget(3))
		var got []bool
		for range 4 {
			got = append(got, b.Withdraw())
		}
		if want := []bool{true, true, true, false}; !slices.Equal(got, want) || b.Tokens() != 0 {
			t.Errorf("NewBudget(3): four Withdraws = %v, Tokens() = %d, want %v and 0", got, b.Tokens(), want)
		}
		for range 5 {
			b.Deposit()
		}
		if n := b.Tokens(); n != 3 {
			t.Errorf("NewBudget(3), emptied, then five Deposits: Tokens() = %d, want 3 (never above the capacity)", n)
		}
	})
}

const (
	budgetRaceWorkers     = 8
	budgetCalibration     = 5
	budgetMaxRounds       = 3000
	budgetScheduledRounds = 100 // seeded schedules tried on an instrumented budget
	budgetFreeRounds      = 200 // real races after them, for the race detector
)

func checkBudgetConcurrency(t *testing.T, h *suites.History, tg target) {
	// Withdraws can only overlap with at least two Ps running goroutines.
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	lab := func(capacity int) budget { return budgetOf(t, tg.newBudget(capacity)) }
	broken := func(capacity int) budget { return newRacyBudget(capacity) }
	want := func(round int, granted, left, refilled int, how string) {
		t.Helper()
		if granted != budgetRaceWorkers/2 || left != 0 || refilled != budgetRaceWorkers/2 {
			t.Fatalf("round %d: %d goroutines each called Withdraw once on NewBudget(%d)%s: %d got a token and Tokens() = %d; then %d Deposits at once: Tokens() = %d; want %d, 0 and %d: a Budget is safe for concurrent use, so no token is handed out twice and no deposit is lost",
				round, budgetRaceWorkers, budgetRaceWorkers/2, how, granted, left, budgetRaceWorkers, refilled, budgetRaceWorkers/2, budgetRaceWorkers/2)
		}
	}

	// Scheduled rounds first. Graded by labctl, the budget's "sync" and
	// "sync/atomic" imports point at suites/syncpoint, and the suite
	// chooses from the case's seed which caller runs at every Lock, Unlock
	// and atomic operation: a Load and the Add that acts on what it read
	// (or two lock sections) are interleaved on every run, on one CPU or
	// many, and a failing round replays from the seed.
	seed := suites.Seed(t)
	h.Note("round after round, %d callers each Withdraw once from a budget of %d, then Deposit once into the emptied budget, their lock and atomic operations interleaved by the suite from seed %d", budgetRaceWorkers, budgetRaceWorkers/2, seed)
	scheduled := 0
	for round := range budgetScheduledRounds {
		granted, left, refilled, trace, controlled := scheduledBudgetRound(seed+int64(round), lab)
		if granted != budgetRaceWorkers/2 || left != 0 || refilled != budgetRaceWorkers/2 {
			// Whatever the schedule, this is what the budget did.
			h.Note("round %d: the schedule of the callers' operations:", round+1)
			const shown = 48
			for i, l := range trace {
				if i == shown {
					h.Note("  ... (%d more switches)", len(trace)-shown)
					break
				}
				h.Note("  %s", l)
			}
			want(round+1, granted, left, refilled, " under a schedule of their lock and atomic operations")
		}
		if !controlled {
			break // no instrumented locks or atomics, or code the schedule cannot drive
		}
		scheduled++
	}
	if scheduled == budgetScheduledRounds {
		// The budget is right under every schedule tried. A few rounds on
		// the real scheduler still give the race detector parallel
		// accesses to look at: the schedule's hand-offs order every
		// access, so under it the detector sees none.
		h.Note("then %d rounds of goroutines released together, for the race detector", budgetFreeRounds)
		for round := range budgetFreeRounds {
			granted, left, refilled := budgetRound(lab)
			want(round+1, granted, left, refilled, " (released together)")
		}
		return
	}

	// Otherwise (the budget synchronises with something the schedule does
	// not drive, or runs under plain go test) the race is run for real,
	// calibrated against a budget known to be broken.
	h.Note("round after round, %d goroutines released together each Withdraw once from a budget of %d, then Deposit once into the emptied budget", budgetRaceWorkers, budgetRaceWorkers/2)
	hits, round := 0, 0
	giveUp := suites.RealNow().Add(suites.RaceBudget)
	for ; round < budgetMaxRounds && hits < budgetCalibration && suites.RealNow().Before(giveUp); round++ {
		if round == budgetMaxRounds/10 && hits == 0 {
			break // this machine does not interleave at all; stop early
		}
		granted, left, refilled := budgetRound(lab)
		want(round+1, granted, left, refilled, "")
		if granted, left, refilled := budgetRound(broken); granted != budgetRaceWorkers/2 || left != 0 || refilled != budgetRaceWorkers/2 {
			hits++
		}
	}
	if hits < budgetCalibration {
		suites.Inconclusive(t, "in %d rounds (at most %v of real time) this machine interleaved budget calls only %d times (the race detector and more cores help); the budget was not caught losing a token", round, suites.RaceBudget, hits)
	}
}

// scheduledBudgetRound is budgetRound under schedules drawn from seed
// (suites/syncpoint): when the budget's mutexes and atomics are the
// grader's instrumented ones, only one caller runs at a time and the suite
// picks who runs at every Lock, Unlock and atomic operation. It returns
// what budgetRound does, the schedules' trace, and whether both races
// (the Withdraws, then the Deposits) were controlled.
func scheduledBudgetRound(seed int64, newBudget func(capacity int) budget) (granted, left, refilled int, trace []string, controlled bool) {
	b := newBudget(budgetRaceWorkers / 2)
	names := make([]string, budgetRaceWorkers)
	fs := make([]func(), budgetRaceWorkers)
	race := func(seed int64, op string, f func()) syncpoint.Result {
		for i := range fs {
			names[i] = fmt.Sprintf("caller %d", i)
			fs[i] = f
		}
		res := syncpoint.Race(seed, names, fs...)
		trace = append(trace, fmt.Sprintf("each caller %s once (seed %d):", op, seed))
		for _, l := range res.Trace {
			trace = append(trace, "  "+l)
		}
		return res
	}
	var n atomic.Int64
	w := race(seed, "Withdraws", func() {
		if b.Withdraw() {
			n.Add(1)
		}
	})
	left = b.Tokens()
	drainBudget(b)
	d := race(seed^0x5bd1e995, "Deposits", b.Deposit)
	return int(n.Load()), left, b.Tokens(), trace, w.Controlled && d.Controlled
}

// drainBudget empties b for the Deposits' race, withdrawing at most as
// many tokens as a budget of the round's capacity can hold: a budget that
// handed a token out twice may count below zero and never say it is empty,
// and the round must still end, with its counts, not hang.
func drainBudget(b budget) {
	for i := 0; i < budgetRaceWorkers && b.Withdraw(); i++ {
	}
}

// budgetRound races budgetRaceWorkers Withdraws on a budget of half as
// many tokens, then as many Deposits on the emptied budget, and returns the
// tokens granted, the tokens left and the tokens after the deposits.
func budgetRound(newBudget func(capacity int) budget) (granted, left, refilled int) {
	b := newBudget(budgetRaceWorkers / 2)
	var n atomic.Int64
	race := func(f func()) {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range budgetRaceWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f()
			}()
		}
		close(start)
		wg.Wait()
	}
	race(func() {
		if b.Withdraw() {
			n.Add(1)
		}
	})
	left = b.Tokens()
	drainBudget(b)
	race(b.Deposit)
	return int(n.Load()), left, b.Tokens()
}

// racyBudget is a deliberately broken budget for calibration: every step is
// atomic, but a read and the write that follows are not one step, so
// concurrent callers lose updates (without a data race the detector would
// report).
type racyBudget struct {
	tokens   atomic.Int64
	capacity int64
}

func newRacyBudget(capacity int) *racyBudget {
	b := &racyBudget{capacity: int64(capacity)}
	b.tokens.Store(int64(capacity))
	return b
}

func (b *racyBudget) Withdraw() bool {
	n := b.tokens.Load()
	if n == 0 {
		return false
	}
	runtime.Gosched()
	b.tokens.Store(n - 1)
	return true
}

func (b *racyBudget) Deposit() {
	n := b.tokens.Load()
	if n < b.capacity {
		runtime.Gosched()
		b.tokens.Store(n + 1)
	}
}

func (b *racyBudget) Tokens() int { return int(b.tokens.Load()) }
