// Package retrysuite is the conformance suite of lab 04 (bounded retries
// with backoff, jitter and a deadline). Run checks any retry policy with a
// Delay and a Do method; the lab's test file, the reference solution's test
// file and the grader all call it the same way:
//
//	func TestRetry(t *testing.T) {
//		retrysuite.Run(t, func(c retrysuite.Config[*Budget]) Policy {
//			return Policy{MaxAttempts: c.MaxAttempts, ...}
//		}, NewBudget, ErrBudgetExhausted)
//	}
//
// Everything runs on virtual time (fakeclock): hours of backoff take
// microseconds, and the suite reads the start of every attempt off the
// virtual clock. Random draws come from generators the suite seeds with
// suites.Seed, so a failure prints the seed that replays it.
package retrysuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
)

// Retrier is what lab 04 builds, as the suite sees it: a retry policy.
type Retrier interface {
	// Delay returns the backoff before retry n+1 (n = 0 is the wait after
	// the first attempt failed): full jitter, uniform in
	// [0, min(Cap, Base·2ⁿ)].
	Delay(n int) time.Duration
	// Do calls op until it succeeds or a rule says stop.
	Do(ctx context.Context, op func(ctx context.Context) error) error
}

// Config is a retry policy as the suite describes it. The lab's test file
// copies it field by field into the lab's own Policy type. B is the lab's
// budget type; its zero value (a nil pointer) means "no budget".
type Config[B any] struct {
	MaxAttempts int           // attempts in total, the first one included
	Base        time.Duration // ceiling of the first retry's delay
	Cap         time.Duration // largest ceiling of any delay
	Timeout     time.Duration // time budget of one Do call; 0: ctx's deadline only
	Rand        *rand.Rand    // the injected, seeded source of jitter
	Budget      B             // shared retry budget; the zero value means none
}

// Lab is the rubric of lab 04: its concepts and cases.
var Lab = suites.Lab{
	Number:   4,
	Slug:     "retry",
	Title:    "Bounded retries with backoff, jitter and a deadline",
	TestName: "TestRetry",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/04-retry.md"

var concepts = []suites.Concept{
	{
		ID:            "bounded-attempts",
		Title:         "Attempts are bounded, and attempts are not retries",
		Misconception: "MaxAttempts is the number of retries, and one more wait after the last failure does no harm.",
		Hint:          "Count on your fingers for MaxAttempts = 3: the first try is attempt 1, so there are at most two retries. After the last attempt fails there is nothing left to wait for: return at once.",
		Docs:          docs + "#attempts-and-retries",
	},
	{
		ID:            "capped-exponential",
		Title:         "Exponential backoff with a cap",
		Misconception: "Doubling the delay on every retry is enough; it never gets out of hand.",
		Hint:          "Write the ceiling for retries 0, 1, 2, ... on paper: Base, 2·Base, 4·Base, and where Cap stops it. Then check that Do sleeps Delay(0) after attempt 1, Delay(1) after attempt 2, and so on.",
		Docs:          docs + "#exponential-backoff-with-a-cap",
	},
	{
		ID:            "full-jitter",
		Title:         "Full jitter spreads retries over the whole window",
		Misconception: "Jitter is a small extra on top of the backoff, or not needed at all when the backoff grows.",
		Hint:          "The delay is one uniform draw between zero and the capped ceiling: U(0, min(Cap, Base·2ⁿ)). Apply the cap to the ceiling first, then draw; never add anything after the cap, and never clamp the draw to the cap.",
		Docs:          docs + "#full-jitter",
	},
	{
		ID:            "seeded-source",
		Title:         "Randomness comes from the injected source",
		Misconception: "Any random generator will do, and a fixed seed of my own makes the delays reproducible.",
		Hint:          "Draw every random number from Policy.Rand, and create no generator of your own anywhere. The caller seeds that one; the same seed must give the same delays, and different seeds different ones.",
		Docs:          docs + "#randomness-comes-from-the-injected-source",
	},
	{
		ID:            "no-overflow",
		Title:         "Large retry numbers do not overflow",
		Misconception: "Base << n is Base times two to the n, for any n.",
		Hint:          "A time.Duration is an int64 of nanoseconds: 100ms << 37 no longer fits, and a shift by 64 or more gives 0. Decide that the ceiling has reached Cap before computing anything that could overflow, for example by comparing Base with Cap >> n.",
		Docs:          docs + "#large-retry-numbers-do-not-overflow",
	},
	{
		ID:            "deadline",
		Title:         "One deadline for the whole call",
		Misconception: "Checking that the deadline has not passed before each wait is enough.",
		Hint:          "Before sleeping, ask whether now + wait would reach the deadline. If it would, give up at once with the last error (and context.DeadlineExceeded): sleeping until the deadline only to fail then helps nobody, and sleeping past it starts an attempt nobody waits for.",
		Docs:          docs + "#one-deadline-for-the-whole-call",
	},
	{
		ID:            "cancellation",
		Title:         "Cancellation stops retrying at once",
		Misconception: "A cancelled context is one more failed attempt; the loop will notice eventually.",
		Hint:          "Wait with a timer inside a select that also watches ctx.Done(), and stop when it fires. Check ctx.Err() after each attempt too: if the caller gave up, no further attempt helps them.",
		Docs:          docs + "#cancellation-stops-retrying",
	},
	{
		ID:            "permanent-errors",
		Title:         "Only transient errors are retried",
		Misconception: "Any error might go away on a second try, so every error deserves a retry.",
		Hint:          "Sort errors into those that can succeed later (5xx, 408, 429, no answer at all) and those that fail the same way every time (400 invalid input, 401 unauthorized, 403, 404, 422). Consult that classification before every retry.",
		Docs:          docs + "#only-transient-errors-are-retried",
	},
	{
		ID:            "retry-after",
		Title:         "Retry-After is a floor, the deadline a ceiling",
		Misconception: "My backoff knows better than the server when to try again, and a server's hint must be obeyed even past my deadline.",
		Hint:          "Wait max(backoff, hint). Then apply the same deadline rule as for any wait: if it would end past the deadline, give up now.",
		Docs:          docs + "#retry-after-is-a-floor-the-deadline-a-ceiling",
	},
	{
		ID:            "retry-budget",
		Title:         "A retry budget fails fast under overload",
		Misconception: "Each caller's own attempt limit is enough to protect the dependency.",
		Hint:          "Take a token from the shared budget just before each retry (after the other checks, before sleeping) and give up at once when there is none. Every successful attempt puts one token back, never above the capacity.",
		Docs:          docs + "#a-retry-budget",
	},
}

type test = suites.Test[target]

// target is the implementation under test, reached through the lab's
// constructors.
type target struct {
	policy    func(c Config[any]) Retrier
	newBudget func(capacity int) any
}

// budgetErr is the implementation's ErrBudgetExhausted for the run. Run is
// called once per test binary, so a package variable is enough.
var budgetErr error

// Run runs lab 04's suite. newPolicy turns the suite's Config into the
// lab's policy (a fresh value per call; policies that share a Config.Budget
// share that budget); newBudget returns a full retry budget of the given
// capacity; errBudgetExhausted is the sentinel Do wraps when the budget
// refuses a retry (matched with errors.Is).
func Run[R Retrier, B any](t *testing.T, newPolicy func(c Config[B]) R, newBudget func(capacity int) B, errBudgetExhausted error) {
	t.Helper()
	if errBudgetExhausted == nil {
		t.Fatal("retrysuite.Run: errBudgetExhausted is nil; pass the sentinel your Do wraps when the budget refuses a retry")
	}
	budgetErr = errBudgetExhausted
	tg := target{
		policy: func(c Config[any]) Retrier {
			cb := Config[B]{MaxAttempts: c.MaxAttempts, Base: c.Base, Cap: c.Cap, Timeout: c.Timeout, Rand: c.Rand}
			if c.Budget != nil {
				cb.Budget = c.Budget.(B)
			}
			return newPolicy(cb)
		},
		newBudget: func(capacity int) any { return newBudget(capacity) },
	}
	suites.Run(t, Lab, tests, func(*testing.T) target { return tg })
}

var tests = []test{
	{
		Case: suites.Case{
			Name:        "max_attempts_counts_the_first_try",
			Concept:     "bounded-attempts",
			Points:      10,
			Explanation: "MaxAttempts is the number of attempts in total, the first one included: MaxAttempts = 3 is one try and two retries, and an operation that always fails is called exactly three times. After the last attempt Do returns at once, with an error that wraps the last attempt's error.",
		},
		Check: checkAttempts,
	},
	{
		Case: suites.Case{
			Name:        "delay_ceiling_doubles_up_to_the_cap",
			Concept:     "capped-exponential",
			Points:      8,
			Explanation: "The ceiling of Delay(n) is min(Cap, Base·2ⁿ): Base before the first retry, doubling each time, and never above Cap. With a generator that always draws its largest value, Delay(n) must be that ceiling.",
		},
		Check: checkCeiling,
	},
	{
		Case: suites.Case{
			Name:        "do_sleeps_the_backoff_between_attempts",
			Concept:     "capped-exponential",
			Points:      7,
			Explanation: "After attempt k fails, Do waits exactly Delay(k-1) before attempt k+1: given the same seed, the gaps between attempts are the delays Delay(0), Delay(1), ... draws for that seed.",
		},
		Check: checkSchedule,
	},
	{
		Case: suites.Case{
			Name:        "full_jitter_spreads_delays_over_the_window",
			Concept:     "full-jitter",
			Points:      10,
			Explanation: "Delay(n) is uniform over [0, min(Cap, Base·2ⁿ)], at the cap too: thousands of draws stay within the bounds, average half the ceiling, fill every quarter of the window and are not all equal. Without that spread, clients that failed together retry together.",
		},
		Check: checkFullJitter,
	},
	{
		Case: suites.Case{
			Name:        "retries_across_workers_do_not_synchronise",
			Concept:     "full-jitter",
			Points:      8,
			Explanation: "A hundred workers whose calls failed at the same moment must not retry at the same moment: that synchronised spike is what knocks a recovering dependency over again.",
		},
		Check: checkWorkers,
	},
	{
		Case: suites.Case{
			Name:        "jitter_comes_from_the_injected_source",
			Concept:     "seeded-source",
			Points:      7,
			Explanation: "Every random draw, in Delay and in Do, comes from Policy.Rand: the same seed gives the same delays (a failure can be replayed), and different seeds give different delays (workers do not move in step).",
		},
		Check: checkSource,
	},
	{
		Case: suites.Case{
			Name:        "large_retry_numbers_do_not_overflow",
			Concept:     "no-overflow",
			Points:      7,
			Explanation: "Base·2ⁿ leaves the int64 range long before n reaches 64. Delay(64) and Delay(1000) must still be random in [0, Cap], never negative, zero or a panic.",
		},
		Check: checkOverflow,
	},
	{
		Case: suites.Case{
			Name:        "deadline_is_never_crossed",
			Concept:     "deadline",
			Points:      10,
			Explanation: "One deadline bounds the whole call (Policy.Timeout or the context's deadline). No attempt starts at or after it, and when the next wait would reach it Do gives up at once, returning the last error together with context.DeadlineExceeded.",
		},
		Check: checkDeadline,
	},
	{
		Case: suites.Case{
			Name:        "cancellation_stops_retrying",
			Concept:     "cancellation",
			Points:      10,
			Explanation: "When the caller cancels its context, Do stops at once: during a wait, after an attempt that saw the cancellation, or before the first attempt. Retrying for a caller who has gone away only adds load.",
		},
		Check: checkCancel,
	},
	{
		Case: suites.Case{
			Name:        "client_errors_are_never_retried",
			Concept:     "permanent-errors",
			Points:      8,
			Explanation: "Invalid input (400), unauthorized (401) and the other 4xx answers except 408 and 429 fail the same way every time: Do makes one attempt and returns. 5xx, 408, 429 and calls that got no answer are transient and are retried.",
		},
		Check: checkPermanent,
	},
	{
		Case: suites.Case{
			Name:        "retry_after_is_honoured_within_the_deadline",
			Concept:     "retry-after",
			Points:      7,
			Explanation: "A server that answers with a Retry-After hint is told when it can take the next call: Do waits at least that long. But the hint never stretches the deadline: if it ends past the deadline, Do gives up at once.",
		},
		Check: checkRetryAfter,
	},
	{
		Case: suites.Case{
			Name:        "retry_budget_fails_fast_under_overload",
			Concept:     "retry-budget",
			Points:      8,
			Explanation: "Callers that share a budget of N tokens make at most N retries in total while the dependency fails for everyone, and the rest fail fast instead of tripling the load. Each success refills one token, up to N.",
		},
		Check: checkBudget,
	},
}

// ---------------------------------------------------------------------------
// The fake dependency and its errors.

// httpError is an error answer of the fake dependency: an HTTP status and,
// when after is positive, a Retry-After hint. It has the StatusCode and
// RetryAfter methods the lab's classifier looks for.
type httpError struct {
	code  int
	after time.Duration
}

func (e *httpError) Error() string {
	s := fmt.Sprintf("%d %s", e.code, http.StatusText(e.code))
	if e.after > 0 {
		s += fmt.Sprintf(" (Retry-After: %v)", e.after)
	}
	return s
}

// StatusCode returns the HTTP status.
func (e *httpError) StatusCode() int { return e.code }

// RetryAfter returns the Retry-After hint, 0 when there is none.
func (e *httpError) RetryAfter() time.Duration { return e.after }

// status returns a fresh error answer with the given code, wrapped the way a
// client library would, so each attempt's error is a distinct value.
func status(code int) error {
	return fmt.Errorf("sign document: %w", &httpError{code: code})
}

// throttled returns a fresh error answer with a Retry-After hint.
func throttled(code int, after time.Duration) error {
	return fmt.Errorf("sign document: %w", &httpError{code: code, after: after})
}

// errNoAnswer is the root of the errors of calls that got no answer at all.
var errNoAnswer = errors.New("connection reset by peer")

func noAnswer() error {
	return fmt.Errorf("sign document: %w", errNoAnswer)
}

func unavailable(int) error { return status(http.StatusServiceUnavailable) }

// describe renders an attempt's or a Do's error for the timeline.
func describe(err error) string {
	if err == nil {
		return "200 OK"
	}
	return err.Error()
}

// attempt is one call of the operation: when it started, relative to the
// Do call it belongs to, and what it returned.
type attempt struct {
	at  time.Duration
	err error
}

// outcome is what one Do call did.
type outcome struct {
	err      error
	attempts []attempt
	returned time.Duration // when Do returned, relative to its call
	panicked bool
}

// last is the last attempt's error, or nil.
func (o *outcome) last() error {
	if len(o.attempts) == 0 {
		return nil
	}
	return o.attempts[len(o.attempts)-1].err
}

// lastAt is the start of the last attempt, or 0.
func (o *outcome) lastAt() time.Duration {
	if len(o.attempts) == 0 {
		return 0
	}
	return o.attempts[len(o.attempts)-1].at
}

// maxCalls is how many times one Do may call the operation before the suite
// stops it: no case allows more than 20 attempts, and a loop without a bound
// would otherwise run forever on virtual time.
const maxCalls = 1000

// errRunaway is the panic the operation raises, through the implementation's
// Do, to stop a loop that does not end; caller.do recovers it.
var errRunaway = errors.New("retrysuite: the operation was called too many times")

// caller runs Do calls against a scripted dependency and records them.
type caller struct {
	h     *suites.History // nil: record nothing
	actor string
	r     Retrier
	// script answers attempt k (1-based) of one Do call. It runs in the
	// goroutine that called op, with op's context.
	script func(ctx context.Context, k int) error
}

// do calls Do once, synchronously, and returns what happened. A panic in the
// implementation fails the test (instead of crashing the bubble). It is
// safe to call from several goroutines at once on different callers.
func (c *caller) do(t testing.TB, ctx context.Context) *outcome {
	t.Helper()
	o := &outcome{}
	var mu sync.Mutex // guards o.attempts against an op called concurrently
	start := time.Now()
	op := func(opCtx context.Context) error {
		mu.Lock()
		k := len(o.attempts) + 1
		if k > maxCalls {
			mu.Unlock()
			panic(errRunaway)
		}
		at := time.Since(start)
		o.attempts = append(o.attempts, attempt{at: at})
		mu.Unlock()
		err := c.script(opCtx, k)
		mu.Lock()
		o.attempts[k-1].err = err
		var gap string
		if k > 1 {
			gap = fmt.Sprintf(" (%v after attempt %d)", (at - o.attempts[k-2].at).Round(time.Microsecond), k-1)
		}
		mu.Unlock()
		if c.h != nil {
			c.h.Record(c.actor, fmt.Sprintf("attempt %d%s", k, gap), describe(err))
		}
		return err
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				o.panicked = true
				o.err = fmt.Errorf("panic: %v", p)
				if p == errRunaway {
					t.Errorf("Do called the operation more than %d times and was still going; the suite stopped it: every retry loop needs a bound", maxCalls)
					return
				}
				t.Errorf("Do panicked: %v", p)
			}
		}()
		o.err = c.r.Do(ctx, op)
	}()
	o.returned = time.Since(start)
	if c.h != nil {
		mu.Lock()
		var since string
		if n := len(o.attempts); n > 0 {
			since = fmt.Sprintf(" (%v after attempt %d started)", (o.returned - o.attempts[n-1].at).Round(time.Microsecond), n)
		}
		mu.Unlock()
		c.h.Record(c.actor, "Do returns"+since, doResult(o.err))
	}
	return o
}

func doResult(err error) string {
	if err == nil {
		return "nil"
	}
	return "error: " + err.Error()
}

// goDo starts c.do in a goroutine and returns the call and where its outcome
// will be once the call has finished.
func (c *caller) goDo(t testing.TB, ctx context.Context) (*suites.Call, *outcome) {
	t.Helper()
	o := &outcome{}
	call := suites.Go(func() { *o = *c.do(t, ctx) })
	return call, o
}

// requireAttempts fails the test when Do made no attempt at all, which is
// how an unfinished Do shows up, so that later checks do not pass vacuously.
func requireAttempts(t testing.TB, what string, o *outcome) bool {
	t.Helper()
	if len(o.attempts) == 0 && !o.panicked {
		t.Errorf("%s: Do made no attempt and returned %v, want it to call the operation", what, o.err)
		return false
	}
	return len(o.attempts) > 0
}

// bubble runs f in a fakeclock bubble whose timeline starts at t=0s, and
// reports a panic in f as a failure instead of crashing the test binary.
func bubble(t *testing.T, h *suites.History, f func(t *testing.T)) {
	t.Helper()
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("panic: %v", p)
			}
		}()
		f(t)
	})
}

// seeded returns a generator for the case, seeded from suites.Seed and a
// stream number, so that a failure can be replayed with labctl --seed.
func seeded(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// constSource is a rand.Source that always returns the same value: all ones
// makes every *rand.Rand method draw its largest value (Int64N(n) = n-1,
// Float64 just below 1), and 1 its smallest (0).
type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

var (
	maxDraws = constSource(^uint64(0))
	minDraws = constSource(1)
)

// countingSource counts the values drawn from it.
type countingSource struct {
	src rand.Source
	n   int
}

func (s *countingSource) Uint64() uint64 {
	s.n++
	return s.src.Uint64()
}

// delayOf calls Delay(n) and turns a panic into a fatal failure.
func delayOf(t testing.TB, r Retrier, n int) (d time.Duration) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Delay(%d) panicked: %v", n, p)
		}
	}()
	return r.Delay(n)
}

// ceiling is the suite's own min(Cap, Base·2ⁿ), in floating point so that it
// cannot overflow.
func ceiling(base, capd time.Duration, n int) time.Duration {
	c := float64(base)
	for range n {
		c *= 2
		if c >= float64(capd) {
			return capd
		}
	}
	return min(time.Duration(c), capd)
}

// nearTop reports whether d is the ceiling c up to the rounding of a
// generator's largest draw (Int64N(c) is c-1ns, Float64 is just below 1).
func nearTop(d, c time.Duration) bool {
	return d <= c && d >= c-c/10000-time.Microsecond
}

// ---------------------------------------------------------------------------
// bounded-attempts

func checkAttempts(t *testing.T, h *suites.History, tg target) {
	seed := suites.Seed(t)
	bubble(t, h, func(t *testing.T) {
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
	})
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
	bubble(t, h, func(t *testing.T) {
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
	})
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
	bubble(t, h, func(t *testing.T) {
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
	})
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

	bubble(t, h, func(t *testing.T) {
		counting := &countingSource{src: rand.NewPCG(uint64(seed), 5)}
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
	})
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
		bubble(t, h, func(t *testing.T) {
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
	bubble(t, h, func(t *testing.T) {
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

	bubble(t, h, func(t *testing.T) {
		h.Note("cancel during a wait: the dependency answers 503; the caller cancels while Do waits to retry")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &caller{h: h, actor: "caller", r: tg.policy(cfg), script: func(_ context.Context, k int) error { return unavailable(k) }}
		call, o := c.goDo(t, ctx)
		fakeclock.Wait() // Do is now parked: waiting to retry, or returned
		if call.Done() {
			if !requireAttempts(t, "cancel during a wait", o) {
				return
			}
			t.Errorf("Do returned %v after %d attempts without waiting to retry a 503; want it to be waiting when the caller cancels", o.err, len(o.attempts))
			return
		}
		h.Note("the caller cancels its context")
		cancel()
		fakeclock.Wait()
		stillWaiting := !call.Done()
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

	bubble(t, h, func(t *testing.T) {
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

	bubble(t, h, func(t *testing.T) {
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
	bubble(t, h, func(t *testing.T) {
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
	})
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
		bubble(t, h, func(t *testing.T) {
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

	bubble(t, h, func(t *testing.T) {
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
	bubble(t, h, func(t *testing.T) {
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
			if errors.Is(o.err, budgetErr) {
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
			t.Errorf("no Do returned an error wrapping %v, want the calls refused a retry by the budget to say so", budgetErr)
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
		if !errors.Is(o.err, budgetErr) || !errors.Is(o.err, o.last()) {
			t.Errorf("Do(...) = %v, want an error wrapping %v and the last attempt's error", o.err, budgetErr)
		}
	})
}
