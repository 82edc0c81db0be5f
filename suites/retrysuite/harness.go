package retrysuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites"
)

// target is the implementation under test, reached through the lab's
// constructors.
type target struct {
	policy             func(c Config[any]) Retrier
	newBudget          func(capacity int) any
	errBudgetExhausted error // what Do wraps when the budget refuses a retry
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

func unavailable0() error { return status(http.StatusServiceUnavailable) }

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

// part runs one part of a case that is made of several independent parts:
// the timeline restarts at t=0s for it, and a part that fails ends the
// case, so that the feedback shows the first part that went wrong.
func part(t *testing.T, h *suites.History, f func()) {
	t.Helper()
	h.Restart()
	f()
	if t.Failed() {
		t.FailNow()
	}
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

// budget is the lab's Budget as the suite uses it directly: the README's
// public API of NewBudget's result.
type budget interface {
	Withdraw() bool
	Deposit()
	Tokens() int
}

// budgetOf returns b's Withdraw, Deposit and Tokens, and fails the test when
// the lab's budget type lacks them.
func budgetOf(t testing.TB, b any) budget {
	t.Helper()
	bb, ok := b.(budget)
	if !ok {
		t.Fatalf("NewBudget returned a %T, which has no Withdraw() bool, Deposit() and Tokens() int methods; keep the Budget API of the README", b)
	}
	return bb
}

// tokens returns b.Tokens(), with a panic turned into a failure.
func tokens(t testing.TB, b any) (n int) {
	t.Helper()
	bb := budgetOf(t, b)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Budget.Tokens() panicked: %v", p)
		}
	}()
	return bb.Tokens()
}

// ceilingOf calls Ceiling(n) and turns a panic into a fatal failure.
func ceilingOf(t testing.TB, r Retrier, n int) (d time.Duration) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Ceiling(%d) panicked: %v", n, p)
		}
	}()
	return r.Ceiling(n)
}

// topOf is the largest value Delay(n) draws: the larger of Delay(n) with a
// generator that always draws its largest value and with one that always
// draws its smallest (so that an implementation that maps draws onto the
// window the other way round is not penalised).
func topOf(t testing.TB, tg target, cfg Config[any], n int) time.Duration {
	t.Helper()
	cfg.Rand = rand.New(maxDraws)
	hi := delayOf(t, tg.policy(cfg), n)
	cfg.Rand = rand.New(minDraws)
	lo := delayOf(t, tg.policy(cfg), n)
	return max(hi, lo)
}

// bottomOf is the smallest value Delay(n) draws, as topOf.
func bottomOf(t testing.TB, tg target, cfg Config[any], n int) time.Duration {
	t.Helper()
	cfg.Rand = rand.New(maxDraws)
	hi := delayOf(t, tg.policy(cfg), n)
	cfg.Rand = rand.New(minDraws)
	lo := delayOf(t, tg.policy(cfg), n)
	return min(hi, lo)
}

// always returns a script whose every attempt fails with err().
func always(err func() error) func(context.Context, int) error {
	return func(context.Context, int) error { return err() }
}

// failThenSucceed returns a script whose first n attempts fail with err()
// and whose later attempts succeed.
func failThenSucceed(n int, err func() error) func(context.Context, int) error {
	return func(_ context.Context, k int) error {
		if k <= n {
			return err()
		}
		return nil
	}
}

// hangUntilDone is an attempt that never answers by itself: it returns when
// its context ends, or after a day. It waits on a channel and a timer, never
// on a mutex, so the bubble's clock can move.
func hangUntilDone(opCtx context.Context) error {
	select {
	case <-opCtx.Done():
		return fmt.Errorf("sign document: no answer: %w", opCtx.Err())
	case <-time.After(24 * time.Hour):
		return fmt.Errorf("sign document: no answer after a day: %w", errNoAnswer)
	}
}
