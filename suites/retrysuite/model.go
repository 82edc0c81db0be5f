package retrysuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
)

// The model cases. The model is what the test knows from what it saw: the
// tokens the shared budget must hold after every call it observed, and,
// for one Do call, the dependency's scripted answers, the deadlines and the
// cancellation the test arranged, and the delays Delay draws from a second
// generator seeded like the policy's own (the yardstick of
// do_sleeps_the_backoff_between_attempts). From those, each step says when
// every attempt must start, when Do must return, what its error must wrap,
// how far Do's generator may have moved and how many tokens are left. It
// holds no retry loop and no Ceiling: the delays come from the
// implementation's own Delay, and the class of each scripted answer is
// written beside it, as R13 states it. Whether a failed attempt took effect
// at the dependency is invisible to Do, so the same rules hold either way;
// the timeline says which it was.

// modelAnswer is one answer of the fake dependency, with its class as R13
// gives it.
type modelAnswer struct {
	name      string
	ok        bool
	retryable bool
	code      int   // an HTTP status, or 0 for an error without one
	inner     error // the root of an error without a status
	hinted    bool  // it carries a drawn Retry-After hint
}

// modelAnswers come first in the order rapid draws most often: the
// retryable ones.
var modelAnswers = []modelAnswer{
	{name: "503 before its effect", retryable: true, code: http.StatusServiceUnavailable},
	{name: "no answer (connection reset) before its effect", retryable: true, inner: errNoAnswer},
	{name: "429 with a Retry-After hint", retryable: true, code: http.StatusTooManyRequests, hinted: true},
	{name: "takes effect, then answers 503", retryable: true, code: http.StatusServiceUnavailable},
	{name: "takes effect, 200 OK", ok: true},
	{name: "500", retryable: true, code: http.StatusInternalServerError},
	{name: "503 with a Retry-After hint", retryable: true, code: http.StatusServiceUnavailable, hinted: true},
	{name: "408", retryable: true, code: http.StatusRequestTimeout},
	{name: "the dependency's own timeout: an error wrapping context.DeadlineExceeded, the caller's context alive", retryable: true, inner: context.DeadlineExceeded},
	{name: "takes effect, then the connection resets (no answer)", retryable: true, inner: errNoAnswer},
	{name: "599", retryable: true, code: 599},
	{name: "takes effect, 200 OK", ok: true},
	{name: "400 invalid input", code: http.StatusBadRequest},
	{name: "401 unauthorized", code: http.StatusUnauthorized},
	{name: "404", code: http.StatusNotFound},
	{name: "600", code: 600},
	{name: "takes effect, then answers 409", code: http.StatusConflict},
	{name: "the dependency's error wrapping context.Canceled, the caller's context alive", inner: context.Canceled},
}

// modelHints are the Retry-After hints drawn for a hinted answer: 0 and
// below are no hint (R8), 72h is far above any Cap.
var modelHints = []time.Duration{300 * time.Millisecond, time.Nanosecond, 3 * time.Second, 0, 72 * time.Hour, -5 * time.Second}

// hang is the duration of an attempt that never answers by itself: it
// returns when its context ends, or after a day.
const hang = time.Duration(-1)

// modelDurations are how long an attempt takes. An attempt with a duration
// answers after it whatever happens to its context (a dependency that does
// not watch it, so an attempt may overrun the deadline).
var modelDurations = []time.Duration{0, 40 * time.Millisecond, 0, 700 * time.Millisecond, 0, 3 * time.Second, 40 * time.Millisecond, hang}

var (
	modelMaxAttempts = []int{4, 3, 8, 2, 6, 1, 0, -1}
	modelBases       = []time.Duration{100 * time.Millisecond, 10 * time.Millisecond, time.Second, time.Nanosecond, 3 * time.Nanosecond}
	modelCaps        = []time.Duration{2 * time.Second, 400 * time.Millisecond, time.Minute, 50 * time.Millisecond, 3 * time.Nanosecond}
	modelTimeouts    = []time.Duration{0, 10 * time.Second, 2 * time.Second, time.Hour, 800 * time.Millisecond, -time.Second}
	// modelCtxDeadlines are the caller's deadlines, from Do's call: 0 is
	// none, a negative one has passed already.
	modelCtxDeadlines = []time.Duration{0, 5 * time.Second, time.Minute, 0, 1500 * time.Millisecond, -time.Second}
	modelCapacities   = []int{5, 2, 1, 0, -3}
	modelIdle         = []time.Duration{time.Hour, 30 * 24 * time.Hour}
)

// modelScriptMax bounds the attempts a script answers; a Do that makes
// more is stopped by the model before it needs them.
const modelScriptMax = 8

// modelAttempt is the test's plan for one attempt.
type modelAttempt struct {
	answer modelAnswer
	hint   time.Duration
	dur    time.Duration
}

// err is the answer of an attempt that does not hang: nil for a success,
// else a fresh error value, so that each attempt's error is its own.
func (a modelAttempt) err() error {
	switch {
	case a.answer.ok:
		return nil
	case a.answer.code != 0:
		e := &httpError{code: a.answer.code}
		if a.answer.hinted {
			e.after = a.hint
		}
		return fmt.Errorf("sign document: %w", e)
	}
	return fmt.Errorf("sign document: %w", a.answer.inner)
}

func (a modelAttempt) String() string {
	s := a.answer.name
	if a.answer.hinted {
		s = strings.Replace(s, "a Retry-After hint", fmt.Sprintf("Retry-After: %v", a.hint), 1)
	}
	switch a.dur {
	case hang:
		return "hangs until its context ends (or a day), no answer"
	case 0:
		return s + ", at once"
	}
	return fmt.Sprintf("%s, after %v", s, a.dur)
}

// cancel plans: when the caller gives up.
const (
	cancelNever = iota
	cancelBefore
	cancelInAttempt // at the start of attempt cancelAt
	cancelInWait    // halfway through the wait after attempt cancelAt
)

// observed is one attempt as the test saw it.
type observed struct {
	start, end time.Duration
	err        error
	deadline   time.Duration // the attempt context's deadline, from Do's call
	hasDL      bool
}

// retryModel is the abstract state of one sequence: the shared budget's
// tokens, and what the test needs to describe its calls.
type retryModel struct {
	seq      *modelcheck.Seq
	h        *suites.History
	tg       target
	budget   any // nil: the sequence has no budget
	capacity int
	tokens   int
	n        int
}

func (m *retryModel) bud() budget {
	b, ok := m.budget.(budget)
	if !ok {
		m.seq.Fatalf("NewBudget returned a %T, which has no Withdraw() bool, Deposit() and Tokens() int methods; keep the Budget API of the README", m.budget)
	}
	return b
}

// guarded runs f and turns a panic into a failure of the sequence.
func (m *retryModel) guarded(what string, f func()) {
	m.seq.Helper()
	var p any
	func() {
		defer func() { p = recover() }()
		f()
	}()
	if p != nil {
		m.h.Record("test", what, fmt.Sprintf("panics: %v", p))
		m.seq.Fatalf("%s panicked: %v", what, p)
	}
}

// checkTokens compares Tokens() with the model.
func (m *retryModel) checkTokens(after string) {
	if m.budget == nil {
		return
	}
	var n int
	m.guarded("Budget.Tokens()", func() { n = m.bud().Tokens() })
	if n != m.tokens {
		m.h.Record("test", "Tokens()", fmt.Sprint(n))
		m.seq.Fatalf("after %s, Tokens() = %d, want %d: NewBudget(%d) starts full, each retry made takes one token just before its wait (and no other call does), each successful attempt puts one back up to the capacity, and nothing else changes the count (R15, R16)", after, n, m.tokens, m.capacity)
	}
}

func (m *retryModel) stepWithdraw(t *rapid.T) {
	if m.budget == nil {
		t.SkipNow()
	}
	var ok bool
	m.guarded("Budget.Withdraw()", func() { ok = m.bud().Withdraw() })
	m.h.Record("test", "Withdraw()", fmt.Sprint(ok))
	if want := m.tokens > 0; ok != want {
		m.seq.Fatalf("Withdraw() on a budget that holds %d tokens = %v, want %v (R15)", m.tokens, ok, want)
	}
	if ok {
		m.tokens--
	}
	m.checkTokens("Withdraw()")
}

func (m *retryModel) stepDeposit(t *rapid.T) {
	if m.budget == nil {
		t.SkipNow()
	}
	m.guarded("Budget.Deposit()", func() { m.bud().Deposit() })
	m.h.Record("test", "Deposit()", "returns")
	m.tokens = min(m.capacity, m.tokens+1)
	m.checkTokens(fmt.Sprintf("Deposit() into a budget of capacity %d", m.capacity))
}

func (m *retryModel) stepIdle(t *rapid.T) {
	d := rapid.SampledFrom(modelIdle).Draw(t, "idle")
	fakeclock.Advance(d)
	m.h.Note("%v pass with no call", d)
	m.checkTokens(fmt.Sprintf("%v with no call (tokens come back only with successes)", d))
}

// doPlan is everything the test arranges for one Do call.
type doPlan struct {
	cfg        Config[any]
	seed       uint64
	budgeted   bool
	ctxDL      time.Duration // 0: none
	cancel     int
	cancelAt   int
	script     []modelAttempt
	delays     []time.Duration // Delay(0), Delay(1), ... for the seed
	pos        []int           // draws of the twin generator after 0, 1, ... Delays
	deadline   time.Duration   // the call's deadline, from its start; 0: none
	noDeadline bool
}

func (m *retryModel) drawPlan(t *rapid.T) doPlan {
	var p doPlan
	p.cfg = Config[any]{
		MaxAttempts: rapid.SampledFrom(modelMaxAttempts).Draw(t, "MaxAttempts"),
		Base:        rapid.SampledFrom(modelBases).Draw(t, "Base"),
		Cap:         rapid.SampledFrom(modelCaps).Draw(t, "Cap"),
		Timeout:     rapid.SampledFrom(modelTimeouts).Draw(t, "Timeout"),
	}
	p.seed = rapid.Uint64Range(1, 1<<40).Draw(t, "seed")
	p.budgeted = m.budget != nil && rapid.Bool().Draw(t, "budgeted")
	p.ctxDL = rapid.SampledFrom(modelCtxDeadlines).Draw(t, "ctx deadline")
	switch rapid.IntRange(0, 9).Draw(t, "cancel") {
	case 6:
		p.cancel = cancelBefore
	case 7, 8:
		p.cancel = cancelInWait
	case 9:
		p.cancel = cancelInAttempt
	}
	n := min(max(p.cfg.MaxAttempts, 1), modelScriptMax)
	p.cancelAt = rapid.IntRange(1, n).Draw(t, "cancel at")
	for range n {
		a := modelAttempt{
			answer: rapid.SampledFrom(modelAnswers).Draw(t, "answer"),
			dur:    rapid.SampledFrom(modelDurations).Draw(t, "duration"),
		}
		if a.answer.hinted {
			a.hint = rapid.SampledFrom(modelHints).Draw(t, "hint")
		}
		p.script = append(p.script, a)
	}
	// The call's deadline: the earlier of Timeout and the caller's.
	switch {
	case p.cfg.Timeout > 0 && p.ctxDL != 0:
		p.deadline = min(p.cfg.Timeout, p.ctxDL)
	case p.cfg.Timeout > 0:
		p.deadline = p.cfg.Timeout
	case p.ctxDL != 0:
		p.deadline = p.ctxDL
	default:
		p.noDeadline = true
	}
	return p
}

// twin draws Delay(0), Delay(1), ... from a generator seeded like the
// policy's, counting the values each leaves drawn.
func (m *retryModel) twin(p *doPlan) {
	src := &countingSource{src: rand.NewPCG(p.seed, 0)}
	cfg := p.cfg
	cfg.Rand = rand.New(src)
	r := m.tg.policy(cfg)
	p.pos = []int{0}
	for i := range modelScriptMax + 1 {
		var d time.Duration
		m.guarded(fmt.Sprintf("Delay(%d)", i), func() { d = r.Delay(i) })
		p.delays = append(p.delays, d)
		p.pos = append(p.pos, src.n)
	}
}

func (p doPlan) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxAttempts = %d, Base = %v, Cap = %v, Timeout = %v", p.cfg.MaxAttempts, p.cfg.Base, p.cfg.Cap, p.cfg.Timeout)
	switch {
	case p.ctxDL < 0:
		fmt.Fprintf(&b, ", the caller's deadline passed %v ago", -p.ctxDL)
	case p.ctxDL > 0:
		fmt.Fprintf(&b, ", the caller's deadline %v from now", p.ctxDL)
	}
	if p.budgeted {
		b.WriteString(", the shared budget")
	}
	switch p.cancel {
	case cancelBefore:
		b.WriteString("; the caller has cancelled already")
	case cancelInAttempt:
		fmt.Fprintf(&b, "; the caller cancels while attempt %d is in flight", p.cancelAt)
	case cancelInWait:
		fmt.Fprintf(&b, "; the caller cancels halfway through the wait after attempt %d", p.cancelAt)
	}
	fmt.Fprintf(&b, "; Delay(0..%d) = %v", len(p.script)-1, p.delays[:len(p.script)])
	b.WriteString("; the dependency: ")
	for i, a := range p.script {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "attempt %d %s", i+1, a)
	}
	return b.String()
}

// wait is the wait the rules give after attempt k (1-based) fails.
func (p doPlan) wait(k int) time.Duration {
	w := p.delays[k-1]
	if a := p.script[k-1]; a.answer.hinted && a.hint > w && a.dur != hang {
		w = a.hint
	}
	return w
}

func (m *retryModel) stepDo(t *rapid.T) {
	p := m.drawPlan(t)
	m.twin(&p)
	m.n++
	actor := fmt.Sprintf("caller %d", m.n)
	m.h.Note("%s calls Do: %s", actor, p.describe())

	src := &countingSource{src: rand.NewPCG(p.seed, 0)}
	cfg := p.cfg
	cfg.Rand = rand.New(src)
	if p.budgeted {
		cfg.Budget = m.budget
	}
	r := m.tg.policy(cfg)

	begin := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if p.ctxDL != 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithDeadline(ctx, begin.Add(p.ctxDL))
		defer c2()
	}
	if p.cancel == cancelBefore {
		cancel()
	}
	var (
		mu     sync.Mutex
		obs    []observed
		timers []*time.Timer
	)
	op := func(opCtx context.Context) error {
		mu.Lock()
		k := len(obs) + 1
		if k > 3*modelScriptMax {
			mu.Unlock()
			panic(errRunaway)
		}
		at := time.Since(begin)
		dl, hasDL := opCtx.Deadline()
		obs = append(obs, observed{start: at, deadline: dl.Sub(begin), hasDL: hasDL})
		mu.Unlock()
		a := modelAttempt{answer: modelAnswers[2]}
		if k <= len(p.script) {
			a = p.script[k-1]
		}
		if p.cancel == cancelInAttempt && p.cancelAt == k {
			m.h.Note("%s cancels its context while attempt %d is in flight", actor, k)
			cancel()
		}
		var err error
		if a.dur == hang {
			select {
			case <-opCtx.Done():
				err = fmt.Errorf("sign document: no answer: %w", opCtx.Err())
			case <-time.After(24 * time.Hour):
				err = fmt.Errorf("sign document: no answer after a day: %w", errNoAnswer)
			}
		} else {
			if a.dur > 0 {
				time.Sleep(a.dur)
			}
			err = a.err()
		}
		end := time.Since(begin)
		if p.cancel == cancelInWait && p.cancelAt == k && err != nil && k <= len(p.script) {
			if w := p.wait(k); w >= 2 {
				mu.Lock()
				timers = append(timers, time.AfterFunc(w/2, func() {
					m.h.Note("%s cancels its context, halfway through the %v wait after attempt %d", actor, w, k)
					cancel()
				}))
				mu.Unlock()
			}
		}
		mu.Lock()
		obs[k-1].end, obs[k-1].err = end, err
		var gap string
		if k > 1 {
			gap = fmt.Sprintf(" (%v after attempt %d started)", at-obs[k-2].start, k-1)
		}
		mu.Unlock()
		outcome := describe(err)
		if strings.HasPrefix(a.answer.name, "takes effect") && a.dur != hang {
			outcome += " (the work took effect)"
		}
		m.h.Record(actor, fmt.Sprintf("attempt %d%s", k, gap), outcome)
		return err
	}
	var doErr error
	m.guarded("Do", func() { doErr = r.Do(ctx, op) })
	returned := time.Since(begin)
	mu.Lock()
	for _, tm := range timers {
		tm.Stop()
	}
	got := append([]observed(nil), obs...)
	mu.Unlock()
	m.h.Record(actor, "Do returns", doResult(doErr))
	m.check(p, got, doErr, returned, src.n)
	m.checkTokens(fmt.Sprintf("%s's Do", actor))
}

// check compares one Do call with what the rules require of it, attempt
// by attempt.
func (m *retryModel) check(p doPlan, obs []observed, err error, returned time.Duration, draws int) {
	seq := m.seq
	maxAttempts := max(p.cfg.MaxAttempts, 1)
	// stop checks how Do ended after the last expected attempt (0 if none).
	stop := func(k int, at time.Duration, why string, ok func(error) bool, want string, waits int, extraDraw bool, tokens int) {
		if len(obs) > k {
			seq.Fatalf("Do made attempt %d %v into the call, want it to have stopped %v into the call: %s", k+1, obs[k].start, at, why)
		}
		if returned != at {
			seq.Fatalf("Do returned %v into the call, want %v into the call, at once: %s", returned, at, why)
		}
		if !ok(err) {
			seq.Fatalf("Do = %v, want %s: %s", err, want, why)
		}
		if draws != p.pos[waits] && (!extraDraw || draws != p.pos[waits+1]) {
			if extraDraw {
				seq.Fatalf("after %d waits Do's generator had given %d values, want %d (the draws of %d Delays) or %d (one more Delay, for the wait the deadline or the budget then refused): Do draws one Delay per wait from Policy.Rand and nothing else (R6, R7)", waits, draws, p.pos[waits], waits, p.pos[waits+1])
			}
			seq.Fatalf("after %d waits Do's generator had given %d values, want %d, the draws of exactly %d Delays: Do draws one Delay per wait from Policy.Rand, none when it stops for the context, an error that is not retryable or MaxAttempts, and creates no generator of its own (R6, R7, R12)", waits, draws, p.pos[waits], waits)
		}
		m.tokens = tokens
	}
	wraps := func(targets ...error) func(error) bool {
		return func(err error) bool {
			if err == nil {
				return false
			}
			for _, t := range targets {
				if !errors.Is(err, t) {
					return false
				}
			}
			return true
		}
	}
	if p.cancel == cancelBefore || p.ctxDL < 0 {
		want := context.Canceled
		if p.ctxDL < 0 {
			want = context.DeadlineExceeded // its deadline ended it first
		}
		stop(0, 0, "the caller's context is done before the first attempt, so Do makes none (R12)", wraps(want), "an error wrapping "+want.Error(), 0, false, m.tokens)
		return
	}
	now := time.Duration(0)
	waits := 0
	why := "Do makes its first attempt at once (R1)"
	for k := 1; ; k++ {
		if len(obs) < k {
			seq.Fatalf("Do = %v after %d attempts, want attempt %d %v into the call: %s", err, len(obs), k, now, why)
		}
		a := obs[k-1]
		if a.start != now {
			seq.Fatalf("attempt %d started %v into the call, want %v into the call: %s", k, a.start, now, why)
		}
		if !p.noDeadline && (!a.hasDL || a.deadline != p.deadline) {
			got := "no deadline"
			if a.hasDL {
				got = fmt.Sprintf("a deadline %v into the call", a.deadline)
			}
			seq.Fatalf("attempt %d's context has %s, want the call's deadline, %v into the call: every attempt's context ends at the deadline of the whole call, the earlier of Timeout after Do's call and the caller's deadline (R9, R11)", k, got, p.deadline)
		}
		plan := p.script[k-1]
		cancelled := p.cancel == cancelInAttempt && p.cancelAt == k
		end := now + plan.dur
		if plan.dur == hang {
			switch {
			case cancelled:
				end = now
			case !p.noDeadline:
				end = min(p.deadline, now+24*time.Hour)
			default:
				end = now + 24*time.Hour
			}
			if a.end != end {
				seq.Fatalf("attempt %d hung until its context ended, %v into the call, want %v into the call: every attempt's context ends at the deadline of the whole call (the earlier of Timeout after Do's call and the caller's deadline) or when the caller cancels (R9, R11)", k, a.end, end)
			}
		}
		e := a.err
		if e == nil {
			tokens := m.tokens
			if p.budgeted {
				tokens = min(m.capacity, tokens+1)
			}
			stop(k, end, fmt.Sprintf("attempt %d succeeded, so Do returns nil and makes no further attempt, and the success puts a token back (R2, R16)", k), func(err error) bool { return err == nil }, "nil", waits, false, tokens)
			return
		}
		ctxDone := cancelled || (p.ctxDL > 0 && p.ctxDL <= end)
		ctxErr := context.Canceled
		if !cancelled {
			ctxErr = context.DeadlineExceeded
		}
		retryable := plan.answer.retryable
		if plan.dur == hang {
			// Its error wraps its context's: Canceled if the caller
			// cancelled, DeadlineExceeded at the deadline, else no answer.
			retryable = !cancelled
		}
		w := p.wait(k)
		pastDeadline := !p.noDeadline && end+w >= p.deadline
		type reason struct {
			why  string
			ok   func(error) bool
			want string
			draw bool
		}
		var reasons []reason
		if ctxDone {
			reasons = append(reasons, reason{fmt.Sprintf("the caller's context was done when attempt %d failed (%v), so Do stops at once, draws nothing and takes no token (R12)", k, ctxErr), wraps(ctxErr, e), fmt.Sprintf("an error wrapping %v and attempt %d's error %q", ctxErr, k, e), false})
		}
		if !retryable {
			reasons = append(reasons, reason{fmt.Sprintf("attempt %d's error %q is not retryable (R13, R14)", k, e), wraps(e), fmt.Sprintf("an error wrapping attempt %d's error %q", k, e), false})
		}
		if k >= maxAttempts {
			reasons = append(reasons, reason{fmt.Sprintf("%d attempts of MaxAttempts = %d were made (R1, R3)", k, p.cfg.MaxAttempts), wraps(e), fmt.Sprintf("an error wrapping attempt %d's error %q", k, e), false})
		}
		if pastDeadline {
			reasons = append(reasons, reason{fmt.Sprintf("the wait after attempt %d, %v (Delay(%d) = %v, or a longer Retry-After hint), would end %v into the call, at or past the deadline, %v into the call (R8, R10)", k, w, k-1, p.delays[k-1], end+w, p.deadline), wraps(e, context.DeadlineExceeded), fmt.Sprintf("an error wrapping context.DeadlineExceeded and attempt %d's error %q", k, e), true})
		}
		if len(reasons) == 0 && p.budgeted && m.tokens == 0 {
			reasons = append(reasons, reason{fmt.Sprintf("a retry after attempt %d was due and the shared budget held no token (R15)", k), wraps(e, m.tg.errBudgetExhausted), fmt.Sprintf("an error wrapping %v and attempt %d's error %q", m.tg.errBudgetExhausted, k, e), true})
		}
		if len(reasons) > 0 {
			// Several reasons may hold at once; the README does not order
			// them, so any of them will do.
			var whys, wants []string
			extra := false
			for _, r := range reasons {
				whys = append(whys, r.why)
				wants = append(wants, r.want)
				extra = extra || r.draw
			}
			okAny := func(err error) bool {
				for _, r := range reasons {
					if r.ok(err) {
						return true
					}
				}
				return false
			}
			stop(k, end, strings.Join(whys, "; and "), okAny, strings.Join(wants, ", or "), waits, extra, m.tokens)
			return
		}
		// The retry is made: one token, one Delay, the wait.
		if p.budgeted {
			m.tokens--
		}
		waits++
		if p.cancel == cancelInWait && p.cancelAt == k && w >= 2 {
			at := end + w/2
			stop(k, at, fmt.Sprintf("the caller cancelled %v into the call, halfway through the %v wait after attempt %d: the wait is interruptible and Do stops at once (R12)", at, w, k), wraps(context.Canceled, e), fmt.Sprintf("an error wrapping context.Canceled and attempt %d's error %q", k, e), waits, false, m.tokens)
			return
		}
		now = end + w
		hint := ""
		if plan.answer.hinted && plan.hint > p.delays[k-1] {
			hint = fmt.Sprintf(", the Retry-After hint %v being longer than Delay(%d) = %v (R8)", plan.hint, k-1, p.delays[k-1])
		}
		why = fmt.Sprintf("attempt %d failed %v into the call with a retryable error, attempts were left, the wait of %v ends before any deadline%s, so Do waits exactly Delay(%d) = %v%s and tries again (R1, R7, R10, R13, R15)", k, end, w, budgetNote(p.budgeted), k-1, p.delays[k-1], hint)
	}
}

func budgetNote(budgeted bool) string {
	if budgeted {
		return " and the budget had a token"
	}
	return ""
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 100, Steps: 20}, func(seq *modelcheck.Seq, tg target) {
		m := &retryModel{seq: seq, h: seq.H, tg: tg}
		if rapid.IntRange(0, 2).Draw(seq.T, "has a budget") > 0 {
			c := rapid.SampledFrom(modelCapacities).Draw(seq.T, "capacity")
			m.guarded(fmt.Sprintf("NewBudget(%d)", c), func() { m.budget = tg.newBudget(c) })
			m.capacity = max(c, 0)
			m.tokens = m.capacity
			m.h.Note("the callers share NewBudget(%d)", c)
			m.checkTokens(fmt.Sprintf("NewBudget(%d)", c))
		}
		seq.Repeat(map[string]func(*rapid.T){
			"do":       m.stepDo,
			"do again": m.stepDo,
			"do more":  m.stepDo,
			"withdraw": m.stepWithdraw,
			"deposit":  m.stepDeposit,
			"idle":     m.stepIdle,
		})
	})
}

// The concurrent model: one budget shared by callers at once. Withdraw,
// Deposit and Tokens are operations of their own; a Do contributes the
// token it takes for each retry (from the failed attempt's return to the
// next attempt's start, or to Do's return when it is refused) and the token
// a success puts back (from the successful attempt's return to Do's
// return). Each must take effect at one instant between its call and its
// return, on one count of tokens.

type budgetOp int

const (
	bWithdraw budgetOp = iota
	bDeposit
	bTokens
)

type budgetIn struct {
	op budgetOp
}

type budgetOut struct {
	ok     bool
	tokens int
}

func budgetModel(capacity int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return capacity },
		Step: func(state, input, output any) (bool, any) {
			n := state.(int)
			out := output.(budgetOut)
			switch input.(budgetIn).op {
			case bWithdraw:
				if n > 0 {
					return out.ok, n - 1
				}
				return !out.ok, n
			case bDeposit:
				return true, min(capacity, n+1)
			}
			return out.tokens == n, n
		},
	}
}

const (
	linRounds   = 40
	linClients  = 4
	linCalls    = 4
	linCapacity = 2
)

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		plans := make([][]int, linClients)
		for c := range plans {
			for range linCalls {
				plans[c] = append(plans[c], rng.IntN(6))
			}
		}
		var rec modelcheck.Recorder
		var odd oddAnswers
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, tg target) {
			b := tg.newBudget(linCapacity)
			bb, ok := b.(budget)
			if !ok {
				t.Fatalf("NewBudget returned a %T, which has no Withdraw() bool, Deposit() and Tokens() int methods; keep the Budget API of the README", b)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, plan := range plans {
				r := tg.policy(Config[any]{MaxAttempts: 3, Rand: rand.New(rand.NewPCG(seed, uint64(1000+round*linClients+c))), Budget: b})
				wg.Go(func() {
					<-start
					for _, kind := range plan {
						linCall(t, tg, bb, r, &rec, &odd, c, kind)
					}
				})
			}
			close(start)
			wg.Wait()
		})
		if t.Failed() {
			return
		}
		if msg := odd.first(); msg != "" {
			t.Errorf("%s", msg)
			return
		}
		histories = append(histories, rec.Ops())
	}
	modelcheck.Linearizable(t, h, budgetModel(linCapacity), nil, histories, 5*time.Second)
}

// linCall makes one call of a client: kind 0 Withdraw, 1 Deposit, 2
// Tokens, 3 and 4 a Do whose dependency fails once and then succeeds, 5 a
// Do whose dependency always fails (MaxAttempts = 3, Base = Cap = 0, so no
// wait takes any time).
func linCall(t *testing.T, tg target, b budget, r Retrier, rec *modelcheck.Recorder, odd *oddAnswers, client, kind int) {
	switch kind {
	case 0:
		call := rec.Now()
		var ok bool
		suites.Guard(t, func() { ok = b.Withdraw() })
		ret := rec.Now()
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: budgetIn{bWithdraw}, Output: budgetOut{ok: ok},
			Action: "calls Withdraw()", Outcome: fmt.Sprintf("Withdraw() = %v", ok)})
		return
	case 1:
		call := rec.Now()
		suites.Guard(t, func() { b.Deposit() })
		ret := rec.Now()
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: budgetIn{bDeposit}, Output: budgetOut{},
			Action: "calls Deposit()", Outcome: "Deposit() returns"})
		return
	case 2:
		call := rec.Now()
		var n int
		suites.Guard(t, func() { n = b.Tokens() })
		ret := rec.Now()
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: budgetIn{bTokens}, Output: budgetOut{tokens: n},
			Action: "calls Tokens()", Outcome: fmt.Sprintf("Tokens() = %d", n)})
		return
	}
	succeedAt := 2
	if kind == 5 {
		succeedAt = 0
	}
	type att struct{ start, end int64 }
	var (
		mu   sync.Mutex
		atts []att
	)
	op := func(context.Context) error {
		s := rec.Now()
		mu.Lock()
		k := len(atts) + 1
		atts = append(atts, att{start: s})
		mu.Unlock()
		if k > maxCalls {
			panic(errRunaway)
		}
		runtime.Gosched()
		e := rec.Now()
		mu.Lock()
		atts[k-1].end = e
		mu.Unlock()
		if k == succeedAt {
			return nil
		}
		return status(http.StatusServiceUnavailable)
	}
	var err error
	suites.Guard(t, func() { err = r.Do(context.Background(), op) })
	ret := rec.Now()
	mu.Lock()
	defer mu.Unlock()
	what := "Do against a dependency that fails once, then succeeds"
	if kind == 5 {
		what = "Do against a dependency that always fails (MaxAttempts = 3)"
	}
	n := len(atts)
	if n == 0 {
		odd.add(fmt.Sprintf("%s made no attempt and returned %v, want it to call the operation (R1)", what, err))
		return
	}
	// Every attempt but the last failed with a 503 and was followed by a
	// retry, which took a token.
	for i := 1; i < n; i++ {
		rec.Add(modelcheck.Op{Client: client, Call: atts[i-1].end, Return: atts[i].start, Input: budgetIn{bWithdraw}, Output: budgetOut{ok: true},
			Action: fmt.Sprintf("%s: attempt %d fails (503)", what, i), Outcome: fmt.Sprintf("attempt %d starts (a retry: it took a token)", i+1)})
	}
	last := atts[n-1]
	switch {
	case n == succeedAt:
		if err != nil {
			odd.add(fmt.Sprintf("%s = %v after attempt %d succeeded, want nil (R2)", what, err, n))
			return
		}
		rec.Add(modelcheck.Op{Client: client, Call: last.end, Return: ret, Input: budgetIn{bDeposit}, Output: budgetOut{},
			Action: fmt.Sprintf("%s: attempt %d succeeds", what, n), Outcome: "Do returns nil (the success put a token back)"})
	case n > 3 || (succeedAt > 0 && n > succeedAt):
		odd.add(fmt.Sprintf("%s made %d attempts, want at most %d (R1, R2)", what, n, max(succeedAt, 3)))
	case n == 3:
		if err == nil || errors.Is(err, tg.errBudgetExhausted) {
			odd.add(fmt.Sprintf("%s = %v after 3 attempts, want an error wrapping the last 503 and not %v: MaxAttempts stops it, and no retry is asked for (R3, R15)", what, err, tg.errBudgetExhausted))
		}
	default:
		if !errors.Is(err, tg.errBudgetExhausted) {
			odd.add(fmt.Sprintf("%s = %v after %d attempts with no deadline and attempts left, want a retry, or an error wrapping %v if the budget refused it (R15)", what, err, n, tg.errBudgetExhausted))
			return
		}
		rec.Add(modelcheck.Op{Client: client, Call: last.end, Return: ret, Input: budgetIn{bWithdraw}, Output: budgetOut{ok: false},
			Action: fmt.Sprintf("%s: attempt %d fails (503)", what, n), Outcome: fmt.Sprintf("Do = %v (the budget refused the retry)", err)})
	}
}

// oddAnswers collects answers no count of tokens allows, whatever the
// interleaving: they fail a round without a history, and the one reported
// (the least) is the same on every run.
type oddAnswers struct {
	mu   sync.Mutex
	msgs []string
}

func (o *oddAnswers) add(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, msg)
}

func (o *oddAnswers) first() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.msgs) == 0 {
		return ""
	}
	first := o.msgs[0]
	for _, m := range o.msgs[1:] {
		if m < first {
			first = m
		}
	}
	return first
}
