package leasesuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
	"github.com/fourth-outcome/labkit/suites/syncpoint"
	"github.com/fourth-outcome/labkit/task"
)

// The model cases. The model is what the test knows from what it has
// observed: which task IDs are in the queue and in which order they were
// enqueued, for each of them the copy that was queued, how many times it
// was delivered, the token of its current delivery and the instant it is
// visible from (while leased, the lease's expiry), and every token the
// queue ever issued. It says what every call of the queue must observe,
// never how a queue gets there.

// modelIDs are groups of task IDs drawn to collide: case and a trailing
// space, invalid UTF-8 that a []rune conversion turns into U+FFFD (and
// U+FFFD itself), two encodings of one letter, a NUL. A sequence works on
// two groups and the empty ID (always refused), so that its calls meet on
// the same tasks again and again.
var modelIDs = [][]string{
	{"t", "T", "t "},
	{"\xff", "\ufffd"},
	{"caf\u00e9", "cafe\u0301"},
	{"a", "a\x00"},
}

// modelDocs are the documents of the tasks enqueued: a refused duplicate
// must leave the queued copy as it was.
var modelDocs = []string{"doc-1", "doc-2"}

// modelHolders are the workers that lease.
var modelHolders = []string{"w1", "w2", "w3"}

// forgedToken is a token no queue issues.
const forgedToken = task.LeaseToken("forged token \x00")

// modelVisibilities are the visibility timeouts of the queues the
// sequences build (0 is the default, 30s).
var modelVisibilities = []time.Duration{0, 10 * time.Second, task.MaxVisibilityTimeout}

// modelBadVisibilities are refused by New (R8).
var modelBadVisibilities = []time.Duration{-time.Nanosecond, task.MaxVisibilityTimeout + time.Nanosecond}

// modelExtensions are Extend's durations: both sides of both limits (more
// than 0, at most 12h) and some in between.
var modelExtensions = []time.Duration{-time.Second, 0, time.Nanosecond, time.Second, 10 * time.Second, task.MaxVisibilityTimeout, task.MaxVisibilityTimeout + time.Nanosecond}

// modelDelays are Nack's delays: both sides of both limits (at least 0, at
// most 12h) and some in between.
var modelDelays = []time.Duration{-time.Nanosecond, 0, time.Nanosecond, 10 * time.Second, time.Hour, task.MaxVisibilityTimeout, task.MaxVisibilityTimeout + time.Nanosecond}

// modelAdvances are how far the clock moves in one step, besides the
// instants around each expiry and end of a delay the model knows (up to
// 12h away). Days are left to the hand-written cases: a queue with a
// sweeper ticking every second would spend the case's budget on them.
var modelAdvances = []time.Duration{time.Nanosecond, time.Second, 30 * time.Second, time.Hour}

// showID quotes a task ID for a message.
func showID(s string) string { return strconv.QuoteToASCII(s) }

// deliveries counts a task's deliveries in words.
func deliveries(n int) string {
	switch n {
	case 0:
		return "never delivered"
	case 1:
		return "delivered once"
	}
	return fmt.Sprintf("delivered %d times", n)
}

// describe renders a lease for the timeline, its ID quoted: the IDs the
// sequences draw differ in spaces, NULs and invalid bytes.
func (m *leaseModel) describe(l task.Lease) string {
	return fmt.Sprintf("%s to %s attempt %d, token %s, until %s", showID(l.Task.ID), l.Holder, l.Attempt, m.s.tokens.name(l.Token), m.s.at(l.Expires))
}

// modelTask is a task the model knows is in the queue.
type modelTask struct {
	task      task.Task
	seq       int       // enqueue order
	visibleAt time.Time // invisible before it; while leased, the lease's expiry
	attempts  int       // deliveries so far
	token     task.LeaseToken
	holder    string
}

// leased reports whether the task's current delivery holds at now.
func (e *modelTask) leased(now time.Time) bool {
	return e.token != "" && now.Before(e.visibleAt)
}

// tokenFate is what the model knows of a token it saw issued.
type tokenFate struct {
	id     string
	holder string
	ended  string // why it is dead, when something ended it; "" while only its expiry can
	rule   string // the rule that says so
}

// leaseModel is the abstract state of one sequence.
type leaseModel struct {
	seq *modelcheck.Seq
	s   *target
	q   Queue
	vt  time.Duration // the queue's visibility timeout, the default for 0

	ids     []string // the IDs this sequence enqueues
	tasks   map[string]*modelTask
	next    int               // enqueue order
	issued  []task.LeaseToken // every token the queue issued, in order
	fates   map[task.LeaseToken]*tokenFate
	started []*suites.Call
}

// call runs f in a goroutine of its own and fails the step if it does not
// return at once (a lock left locked by an earlier call) or panics.
func (m *leaseModel) call(what string, f func()) {
	var panicked string
	c := suites.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				panicked = fmt.Sprintf("%v\n%s", r, suites.PanicStack())
			}
		}()
		f()
	})
	m.started = append(m.started, c)
	for i := 0; i < 50 && !c.Returned(); i++ {
		runtime.Gosched()
	}
	if !c.Settle() && !settleAgain(c) {
		m.s.h.Record("test", what, "still waiting")
		m.seq.Fatalf("%s did not return: it waits for something (a lock left locked by an earlier call, an actor that stopped answering), want an answer at once (R2, R9)", what)
	}
	if panicked != "" {
		m.s.h.Record("test", what, "panicked")
		m.seq.Fatalf("%s panicked: %s", what, panicked)
	}
}

// settleAgain looks once more at a call Settle took for stuck. On a
// machine starved of CPU, Settle has been seen to take a call to an actor
// queue (a correct one) for stuck: the call and the actor both looked
// parked, and the call returned a moment later. A call that is really stuck
// (a lock left locked) is still stuck after a tenth of a second of real
// time and a second Settle.
func settleAgain(c *suites.Call) bool {
	for end := suites.RealNow().Add(100 * time.Millisecond); !c.Returned() && suites.RealNow().Before(end); {
		runtime.Gosched()
	}
	return c.Settle()
}

// drawCtx draws the context of a call: background, or one already
// cancelled.
func drawCtx(t *rapid.T) (context.Context, bool) {
	if rapid.IntRange(0, 5).Draw(t, "cancelled") == 5 { // not 0: a shortened sequence keeps only the cancellations it needs
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, true
	}
	return context.Background(), false
}

// withCtx adds " with a cancelled ctx" to a call's timeline line.
func withCtx(what string, cancelled bool) string {
	if cancelled {
		return what + " (ctx done)"
	}
	return what
}

// wantCanceled fails the step unless err wraps context.Canceled (R10).
func (m *leaseModel) wantCanceled(what string, got string, err error) {
	if !errors.Is(err, context.Canceled) {
		m.seq.Fatalf("%s with a cancelled ctx = %s, want an error wrapping %q, and nothing changed (R10)", what, got, context.Canceled)
	}
}

// visible returns the task Lease must hand out at now: the visible one
// enqueued first, or nil.
func (m *leaseModel) visible(now time.Time) *modelTask {
	var pick *modelTask
	for _, e := range m.tasks {
		if !now.Before(e.visibleAt) && (pick == nil || e.seq < pick.seq) {
			pick = e
		}
	}
	return pick
}

// holding returns the task whose current delivery tok is at now, or nil.
func (m *leaseModel) holding(tok task.LeaseToken, now time.Time) *modelTask {
	for _, e := range m.tasks {
		if tok != "" && e.token == tok && e.leased(now) {
			return e
		}
	}
	return nil
}

// whyDead says why tok is not a current lease, and the rules that say
// so besides base.
func (m *leaseModel) whyDead(tok task.LeaseToken, base string) (why, rules string) {
	f, ok := m.fates[tok]
	switch {
	case tok == "":
		return "the empty token is nobody's lease", base
	case !ok:
		return "the queue never issued that token", base
	case f.ended != "":
		return f.ended, base + f.rule
	}
	if e, ok := m.tasks[f.id]; ok && e.token == tok {
		return fmt.Sprintf("its lease of %s ended at %s, and a lease holds while now is before Expires", showID(f.id), m.s.at(e.visibleAt)), base + ", R3"
	}
	return "its lease ended", base + ", R3"
}

// end marks tok dead: why, by rule.
func (m *leaseModel) end(tok task.LeaseToken, why, rule string) {
	if f, ok := m.fates[tok]; ok && f.ended == "" {
		f.ended, f.rule = why, rule
	}
}

// actorOf names the worker tok was issued to, for the timeline.
func (m *leaseModel) actorOf(tok task.LeaseToken) string {
	if f, ok := m.fates[tok]; ok {
		return f.holder
	}
	return "a worker"
}

// state describes the queue as the model knows it, for a message.
func (m *leaseModel) state(now time.Time) string {
	if len(m.tasks) == 0 {
		return "the queue is empty"
	}
	all := make([]*modelTask, 0, len(m.tasks))
	for _, e := range m.tasks {
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *modelTask) int { return a.seq - b.seq })
	var parts []string
	for _, e := range all {
		switch {
		case e.leased(now):
			parts = append(parts, fmt.Sprintf("%s leased to %s (%s) until %s", showID(e.task.ID), e.holder, m.s.tokens.name(e.token), m.s.at(e.visibleAt)))
		case now.Before(e.visibleAt):
			parts = append(parts, fmt.Sprintf("%s released, visible from %s", showID(e.task.ID), m.s.at(e.visibleAt)))
		default:
			parts = append(parts, fmt.Sprintf("%s visible (%s so far)", showID(e.task.ID), deliveries(e.attempts)))
		}
	}
	return "the queue holds, in enqueue order: " + strings.Join(parts, "; ")
}

func (m *leaseModel) stepEnqueue(t *rapid.T) {
	id := rapid.SampledFrom(m.ids).Draw(t, "id")
	doc := rapid.SampledFrom(modelDocs).Draw(t, "document")
	ctx, cancelled := drawCtx(t)
	tk := task.Task{ID: id, DocumentID: doc}
	what := fmt.Sprintf("Enqueue(%s, %s)", showID(id), doc)
	var err error
	m.call(what, func() { err = m.q.Enqueue(ctx, tk) })
	m.s.h.Record("producer", withCtx(what, cancelled), outcome(err))
	queued, in := m.tasks[id]
	switch {
	case cancelled:
		m.wantCanceled(what, fmt.Sprint(err), err)
	case id == "":
		if !errors.Is(err, task.ErrInvalidTask) {
			m.seq.Fatalf("%s = %v, want an error wrapping %q: a task needs an ID (R1)", what, err, task.ErrInvalidTask)
		}
	case in:
		if !errors.Is(err, task.ErrDuplicateTask) {
			m.seq.Fatalf("%s = %v, want an error wrapping %q: %s (with %s) is still in the queue, not acknowledged (R1; IDs are compared exactly)", what, err, task.ErrDuplicateTask, showID(id), queued.task.DocumentID)
		}
	default:
		if err != nil {
			m.seq.Fatalf("%s = %v, want nil: no task with that ID is in the queue (never queued, or acknowledged), %s (R1; IDs are compared exactly)", what, err, m.state(time.Now()))
		}
		m.next++
		m.tasks[id] = &modelTask{task: tk, seq: m.next, visibleAt: time.Now()}
	}
}

func (m *leaseModel) stepLease(t *rapid.T) {
	holder := rapid.SampledFrom(modelHolders).Draw(t, "holder")
	ctx, cancelled := drawCtx(t)
	what := fmt.Sprintf("Lease(%q)", holder)
	var l task.Lease
	var err error
	m.call(what, func() { l, err = m.q.Lease(ctx, holder) })
	got := "error " + fmt.Sprint(err)
	if err == nil {
		got = m.describe(l)
		m.s.h.Record(holder, withCtx(what, cancelled), got)
	} else {
		m.s.h.Record(holder, withCtx(what, cancelled), outcome(err))
	}
	now := time.Now()
	pick := m.visible(now)
	if cancelled {
		m.wantCanceled(what, got, err)
		return
	}
	if pick == nil {
		if !errors.Is(err, task.ErrNoTask) {
			m.seq.Fatalf("%s at %s = %s, want an error wrapping %q: no task is visible, %s (R2, R3)", what, m.s.at(now), got, task.ErrNoTask, m.state(now))
		}
		return
	}
	want := task.Lease{Task: pick.task, Token: l.Token, Holder: holder, Attempt: pick.attempts + 1, Expires: now.Add(m.vt)}
	switch {
	case err != nil:
		m.seq.Fatalf("%s at %s = %s, want %s: it is visible, %s (R2, R3)", what, m.s.at(now), got, showID(pick.task.ID), m.state(now))
	case l.Task.ID != pick.task.ID:
		m.seq.Fatalf("%s at %s = %s, want %s: the visible task enqueued first, %s (R2: a released or expired task keeps its place; R3)", what, m.s.at(now), got, showID(pick.task.ID), m.state(now))
	case l.Task != pick.task:
		m.seq.Fatalf("%s = %s with document %q, want the task as it was queued, with %q: a refused duplicate leaves the queued task as it was (R1)", what, got, l.Task.DocumentID, pick.task.DocumentID)
	case l.Attempt != want.Attempt:
		m.seq.Fatalf("%s = %s, want attempt %d: the task was %s before, whether those deliveries expired or were released (R4; an acknowledged task queued again starts at 1, R1)", what, got, want.Attempt, deliveries(pick.attempts))
	case l.Holder != holder:
		m.seq.Fatalf("%s = %s, want holder %q (R2)", what, got, holder)
	case !l.Expires.Equal(want.Expires):
		m.seq.Fatalf("%s at %s = %s, want expires %s: the visibility timeout (%v) after the Lease call (R2)", what, m.s.at(now), got, m.s.at(want.Expires), m.vt)
	case l.Token == "":
		m.seq.Fatalf("%s = %s with an empty token, want a new, non-empty token (R4)", what, got)
	}
	if f, seen := m.fates[l.Token]; seen {
		m.seq.Fatalf("%s = %s, whose token %s the queue issued before (for %s), want a token never issued before (R4)", what, got, m.s.tokens.name(l.Token), showID(f.id))
	}
	if pick.token != "" {
		m.end(pick.token, fmt.Sprintf("%s was delivered again since (as %s)", showID(pick.task.ID), m.s.tokens.name(l.Token)), ", R4")
	}
	pick.token, pick.holder, pick.visibleAt = l.Token, holder, want.Expires
	pick.attempts++
	m.issued = append(m.issued, l.Token)
	m.fates[l.Token] = &tokenFate{id: pick.task.ID, holder: holder}
}

// drawToken draws a token: one the queue issued, the empty one or one it
// never issued.
func (m *leaseModel) drawToken(t *rapid.T) task.LeaseToken {
	choices := append([]task.LeaseToken{"", forgedToken}, m.issued...)
	// The latest tokens are the likeliest to be current: draw among them
	// more often.
	if n := len(m.issued); n > 0 && rapid.Bool().Draw(t, "a recent token") {
		choices = m.issued[max(0, n-3):]
	}
	return rapid.SampledFrom(choices).Draw(t, "token")
}

func (m *leaseModel) stepExtend(t *rapid.T) {
	tok := m.drawToken(t)
	d := rapid.SampledFrom(modelExtensions).Draw(t, "extension")
	ctx, cancelled := drawCtx(t)
	name := m.s.tokens.name(tok)
	if tok == forgedToken {
		name = "a token never issued"
	}
	what := fmt.Sprintf("Extend(%s, %v)", name, d)
	var l task.Lease
	var err error
	m.call(what, func() { l, err = m.q.Extend(ctx, tok, d) })
	got := "error " + fmt.Sprint(err)
	actor := m.actorOf(tok)
	if err == nil {
		got = "renewed: " + m.describe(l)
		m.s.h.Record(actor, withCtx(what, cancelled), got)
	} else {
		m.s.h.Record(actor, withCtx(what, cancelled), outcome(err))
	}
	now := time.Now()
	e := m.holding(tok, now)
	valid := d > 0 && d <= task.MaxVisibilityTimeout
	switch {
	case cancelled:
		m.wantCanceled(what, got, err)
	case !valid && e != nil:
		if !errors.Is(err, task.ErrInvalidDuration) {
			m.seq.Fatalf("%s at %s = %s, want an error wrapping %q: a renewal is more than 0 and at most 12h, and a refused call changes nothing (R8)", what, m.s.at(now), got, task.ErrInvalidDuration)
		}
	case !valid:
		if !errors.Is(err, task.ErrInvalidDuration) && !errors.Is(err, task.ErrLeaseLost) {
			why, rules := m.whyDead(tok, "R5, R8")
			m.seq.Fatalf("%s at %s = %s, want an error wrapping %q or %q: the duration is out of range and %s (%s)", what, m.s.at(now), got, task.ErrInvalidDuration, task.ErrLeaseLost, why, rules)
		}
	case e == nil:
		if !errors.Is(err, task.ErrLeaseLost) {
			why, rules := m.whyDead(tok, "R5")
			m.seq.Fatalf("%s at %s = %s, want an error wrapping %q: %s; only the current delivery is renewed, and an expired lease is never renewed back to life (%s)", what, m.s.at(now), got, task.ErrLeaseLost, why, rules)
		}
	default:
		want := task.Lease{Task: e.task, Token: tok, Holder: e.holder, Attempt: e.attempts, Expires: now.Add(d)}
		switch {
		case err != nil:
			m.seq.Fatalf("%s at %s = %s, want the lease renewed until %s: it is the current delivery of %s, held until %s (R5)", what, m.s.at(now), got, m.s.at(want.Expires), showID(e.task.ID), m.s.at(e.visibleAt))
		case !l.Expires.Equal(want.Expires):
			m.seq.Fatalf("%s at %s = %s, want expires %s: %v after now, not after the Lease call or the old expiry (%s) (R5)", what, m.s.at(now), got, m.s.at(want.Expires), d, m.s.at(e.visibleAt))
		case l.Task != want.Task || l.Token != want.Token || l.Holder != want.Holder || l.Attempt != want.Attempt:
			m.seq.Fatalf("%s = %s, want the same delivery (%s) with a new expiry (R5)", what, got, m.describe(want))
		}
		e.visibleAt = want.Expires
	}
}

func (m *leaseModel) stepAck(t *rapid.T) {
	tok := m.drawToken(t)
	ctx, cancelled := drawCtx(t)
	name := m.s.tokens.name(tok)
	if tok == forgedToken {
		name = "a token never issued"
	}
	what := fmt.Sprintf("Ack(%s)", name)
	now := time.Now()
	e := m.holding(tok, now)
	actor := m.actorOf(tok)
	var err error
	m.call(what, func() { err = m.q.Ack(ctx, tok) })
	m.s.h.Record(actor, withCtx(what, cancelled), outcome(err))
	switch {
	case cancelled:
		m.wantCanceled(what, fmt.Sprint(err), err)
	case e == nil:
		if !errors.Is(err, task.ErrLeaseLost) {
			why, rules := m.whyDead(tok, "R6")
			m.seq.Fatalf("%s at %s = %v, want an error wrapping %q, and the task left as it is: %s (%s)", what, m.s.at(now), err, task.ErrLeaseLost, why, rules)
		}
	default:
		if err != nil {
			m.seq.Fatalf("%s at %s = %v, want nil: it is the current delivery of %s, held until %s (R6)", what, m.s.at(now), err, showID(e.task.ID), m.s.at(e.visibleAt))
		}
		m.end(tok, fmt.Sprintf("it acknowledged %s at %s", showID(e.task.ID), m.s.at(now)), "")
		delete(m.tasks, e.task.ID)
	}
}

func (m *leaseModel) stepNack(t *rapid.T) {
	tok := m.drawToken(t)
	delay := rapid.SampledFrom(modelDelays).Draw(t, "delay")
	ctx, cancelled := drawCtx(t)
	name := m.s.tokens.name(tok)
	if tok == forgedToken {
		name = "a token never issued"
	}
	what := fmt.Sprintf("Nack(%s, %v)", name, delay)
	now := time.Now()
	e := m.holding(tok, now)
	actor := m.actorOf(tok)
	var err error
	m.call(what, func() { err = m.q.Nack(ctx, tok, delay) })
	m.s.h.Record(actor, withCtx(what, cancelled), outcome(err))
	valid := delay >= 0 && delay <= task.MaxVisibilityTimeout
	switch {
	case cancelled:
		m.wantCanceled(what, fmt.Sprint(err), err)
	case !valid && e != nil:
		if !errors.Is(err, task.ErrInvalidDuration) {
			m.seq.Fatalf("%s at %s = %v, want an error wrapping %q: a delay is at least 0 and at most 12h, and a refused call releases nothing (R8)", what, m.s.at(now), err, task.ErrInvalidDuration)
		}
	case !valid:
		if !errors.Is(err, task.ErrInvalidDuration) && !errors.Is(err, task.ErrLeaseLost) {
			why, rules := m.whyDead(tok, "R7, R8")
			m.seq.Fatalf("%s at %s = %v, want an error wrapping %q or %q: the delay is out of range and %s (%s)", what, m.s.at(now), err, task.ErrInvalidDuration, task.ErrLeaseLost, why, rules)
		}
	case e == nil:
		if !errors.Is(err, task.ErrLeaseLost) {
			why, rules := m.whyDead(tok, "R7")
			m.seq.Fatalf("%s at %s = %v, want an error wrapping %q, and nothing released: %s (%s)", what, m.s.at(now), err, task.ErrLeaseLost, why, rules)
		}
	default:
		if err != nil {
			m.seq.Fatalf("%s at %s = %v, want nil: it is the current delivery of %s, held until %s (R7)", what, m.s.at(now), err, showID(e.task.ID), m.s.at(e.visibleAt))
		}
		m.end(tok, fmt.Sprintf("it released %s at %s, and a released token is dead, also while the delay runs", showID(e.task.ID), m.s.at(now)), ", R7")
		e.token, e.holder = "", ""
		e.visibleAt = now.Add(delay)
	}
}

// stepAdvance moves the clock: to a nanosecond before, exactly at or a
// nanosecond after an instant a task becomes visible (a lease's expiry,
// the end of a release's delay), or by a drawn duration.
func (m *leaseModel) stepAdvance(t *rapid.T) {
	now := time.Now()
	var targets []time.Duration
	for _, e := range m.tasks {
		if d := e.visibleAt.Sub(now); d > 0 {
			targets = append(targets, d-time.Nanosecond, d, d+time.Nanosecond)
		}
	}
	slices.Sort(targets)
	targets = slices.Compact(targets)
	if len(targets) > 0 && targets[0] == 0 {
		targets = targets[1:]
	}
	choices := append(targets, modelAdvances...)
	d := rapid.SampledFrom(choices).Draw(t, "advance")
	fakeclock.Advance(d)
	m.s.h.Note("%v pass: now %s", d, m.s.at(time.Now()))
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 100, Steps: 30}, func(seq *modelcheck.Seq, s *target) {
		if rapid.IntRange(0, 3).Draw(seq.T, "a refused visibility timeout first") == 3 {
			bad := rapid.SampledFrom(modelBadVisibilities).Draw(seq.T, "refused visibility timeout")
			_, err := s.build(task.QueueOptions{VisibilityTimeout: bad})
			s.h.Recordf("test", fmt.Sprintf("New(VisibilityTimeout: %v)", bad), "%s", outcome(err))
			if !errors.Is(err, task.ErrInvalidDuration) {
				seq.Fatalf("New(VisibilityTimeout: %v) = %v, want an error wrapping %q: the visibility timeout is at least 0 and at most 12h (R8)", bad, err, task.ErrInvalidDuration)
			}
		}
		vt := rapid.SampledFrom(modelVisibilities).Draw(seq.T, "visibility timeout")
		q, err := s.build(task.QueueOptions{VisibilityTimeout: vt})
		if err != nil {
			s.h.Recordf("test", fmt.Sprintf("New(VisibilityTimeout: %v)", vt), "%s", outcome(err))
			seq.Fatalf("New(VisibilityTimeout: %v) = %v, want a queue (R2, R8)", vt, err)
		}
		s.h.Recordf("test", "New", "queue with visibility timeout %v", vt)
		if vt == 0 {
			vt = task.DefaultVisibilityTimeout
		}
		m := &leaseModel{seq: seq, s: s, q: q, vt: vt, ids: []string{""}, tasks: map[string]*modelTask{}, fates: map[task.LeaseToken]*tokenFate{}}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(modelIDs)-1), 2, 2, rapid.ID).Draw(seq.T, "groups") {
			m.ids = append(m.ids, modelIDs[i]...)
		}
		defer func() {
			for _, c := range m.started {
				c.Settle()
			}
		}()
		seq.Repeat(map[string]func(*rapid.T){
			"enqueue": m.stepEnqueue,
			"lease":   m.stepLease,
			"extend":  m.stepExtend,
			"ack":     m.stepAck,
			"nack":    m.stepNack,
			"advance": m.stepAdvance,
		})
	})
}

// The concurrent model. Every call is one operation of the history. The
// clock does not move while the clients run (the bubble's time stands
// still while any goroutine runs), so no lease expires: an Enqueue is
// accepted exactly when its ID is not in the queue; a Lease gets the
// visible task enqueued first, with the next attempt, or ErrNoTask when
// none is visible; an Ack, Nack or Extend succeeds exactly for the current
// token of a leased task, and the Ack removes it, the Nack makes it visible
// again in its place. A Lease may take any task, so a round's history is
// not split by task: each round is a part of its own, kept small.

// linIDs are the tasks of the concurrent rounds: few, so that calls
// collide.
var linIDs = []string{"a", "b"}

type linKind int

const (
	linEnqueue linKind = iota
	linLease
	linAck
	linNack
	linExtend
)

type linInput struct {
	kind  linKind
	id    int    // enqueue: the index of the ID in linIDs
	doc   string // enqueue
	token task.LeaseToken
}

type linOutput struct {
	ok      bool // enqueued, leased, acknowledged, released, renewed
	id      int  // lease, extend: the index of the task's ID
	doc     string
	attempt int
	token   task.LeaseToken
}

type linTask struct {
	present  bool
	seq      int
	doc      string
	attempts int
	token    task.LeaseToken // "" while visible
}

type linState struct {
	tasks [2]linTask
	next  int
}

// holding returns the index of the task whose current token is tok, or -1.
func (s linState) holding(tok task.LeaseToken) int {
	for i, e := range s.tasks {
		if e.present && tok != "" && e.token == tok {
			return i
		}
	}
	return -1
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		switch in.kind {
		case linEnqueue:
			e := &s.tasks[in.id]
			if out.ok == e.present {
				return false, s
			}
			if out.ok {
				s.next++
				*e = linTask{present: true, seq: s.next, doc: in.doc}
			}
			return true, s
		case linLease:
			pick := -1
			for i, e := range s.tasks {
				if e.present && e.token == "" && (pick < 0 || e.seq < s.tasks[pick].seq) {
					pick = i
				}
			}
			if !out.ok {
				return pick < 0, s
			}
			if pick != out.id {
				return false, s
			}
			e := &s.tasks[pick]
			if out.doc != e.doc || out.attempt != e.attempts+1 {
				return false, s
			}
			e.attempts++
			e.token = out.token
			return true, s
		}
		i := s.holding(in.token)
		if out.ok != (i >= 0) {
			return false, s
		}
		if !out.ok {
			return true, s
		}
		e := &s.tasks[i]
		switch in.kind {
		case linAck:
			*e = linTask{}
		case linNack:
			e.token = ""
		case linExtend:
			if out.id != i || out.doc != e.doc || out.attempt != e.attempts || out.token != in.token {
				return false, s
			}
		}
		return true, s
	},
}

const (
	linRounds  = 30
	linClients = 4
	linCalls   = 5
	// linVisibility is the rounds' visibility timeout and renewal: the
	// clock does not move during a round, so no lease expires.
	linVisibility = time.Hour
)

// linStep is one call a client plans: its kind, and for an Ack, Nack or
// Extend whose token, its own latest or the latest any client got.
type linStep struct {
	kind   linKind
	id     int
	shared bool
}

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		plans := make([][]linStep, linClients)
		for c := range plans {
			for range linCalls {
				st := linStep{id: rng.IntN(len(linIDs)), shared: rng.IntN(2) == 0}
				switch k := rng.IntN(7); {
				case k < 2:
					st.kind = linEnqueue
				case k < 4:
					st.kind = linLease
				default:
					st.kind = linKind(int(linAck) + k - 4)
				}
				plans[c] = append(plans[c], st)
			}
		}
		var rec modelcheck.Recorder
		odd := &linOdd{tokens: map[task.LeaseToken]string{}}
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, s *target) {
			q, err := s.build(task.QueueOptions{VisibilityTimeout: linVisibility})
			if err != nil {
				t.Errorf("New(VisibilityTimeout: %v) = %v, want a queue (R2)", linVisibility, err)
				return
			}
			var latest sharedToken
			clients := make([]func(), len(plans))
			names := make([]string, len(plans))
			for c, plan := range plans {
				names[c] = fmt.Sprintf("client %d", c+1)
				clients[c] = func() {
					var mine task.LeaseToken
					for i, st := range plan {
						tok := mine
						if st.shared {
							tok = latest.get()
						}
						if tok == "" && st.kind >= linAck {
							st.kind = linLease // no token to settle yet: lease one
						}
						if got := linCall(t, q, &rec, odd, c, i, st, tok); got != "" {
							mine = got
							latest.set(got)
						}
					}
				}
			}
			if round%2 == 1 && syncpoint.Used() {
				// Graded by labctl, the queue's "sync" is the suite's
				// (see checkConcurrentLeases): every other round, the
				// clients' Locks and Unlocks are interleaved in an order
				// drawn from the seed, so a check and an act in two lock
				// sections are come between on every run.
				syncpoint.Race(int64(seed)+int64(round), names, clients...)
				return
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, f := range clients {
				wg.Go(func() {
					<-start
					f()
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
	modelcheck.Linearizable(t, h, linModel, nil, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

// sharedToken is the latest token any client of a round was given.
type sharedToken struct {
	mu  sync.Mutex
	tok task.LeaseToken
}

func (s *sharedToken) get() task.LeaseToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tok
}

func (s *sharedToken) set(tok task.LeaseToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tok = tok
}

// linOdd collects answers that no order of the calls allows (an error no
// rule gives, a token issued twice, a lease to someone else), whatever the
// interleaving: they fail a round without a history, and the one reported
// (the least) is the same on every run.
type linOdd struct {
	mu     sync.Mutex
	msgs   []string
	tokens map[task.LeaseToken]string // every token issued in the round, and to whom
}

func (o *linOdd) add(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, msg)
}

// issued records a token a Lease returned and says whether the round had
// seen it before.
func (o *linOdd) issued(tok task.LeaseToken, what string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, seen := o.tokens[tok]
	if !seen {
		o.tokens[tok] = what
	}
	return prev, seen
}

func (o *linOdd) first() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.msgs) == 0 {
		return ""
	}
	return slices.Min(o.msgs)
}

// linTokenName names a token in a round's timeline: its first characters,
// enough to tell the round's tokens apart.
func linTokenName(tok task.LeaseToken) string {
	if tok == "" {
		return `""`
	}
	return fmt.Sprintf("%.12q", string(tok))
}

// linCall makes one planned call and records it; it returns the token a
// successful Lease got, "" otherwise.
func linCall(t *testing.T, q Queue, rec *modelcheck.Recorder, odd *linOdd, client, n int, st linStep, tok task.LeaseToken) task.LeaseToken {
	ctx := context.Background()
	holder := fmt.Sprintf("client %d", client+1)
	switch st.kind {
	case linEnqueue:
		doc := fmt.Sprintf("doc-%d-%d", client+1, n)
		in := linInput{kind: linEnqueue, id: st.id, doc: doc}
		what := fmt.Sprintf("Enqueue(%q, %s)", linIDs[st.id], doc)
		call := rec.Now()
		var err error
		suites.Guard(t, func() { err = q.Enqueue(ctx, task.Task{ID: linIDs[st.id], DocumentID: doc}) })
		ret := rec.Now()
		if err != nil && !errors.Is(err, task.ErrDuplicateTask) {
			odd.add(fmt.Sprintf("%s = %v, want nil or an error wrapping %q (R1)", what, err, task.ErrDuplicateTask))
			return ""
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: linOutput{ok: err == nil},
			Action: "calls " + what, Outcome: what + " " + outcome(err)})
	case linLease:
		what := fmt.Sprintf("Lease(%q)", holder)
		before := time.Now()
		call := rec.Now()
		var l task.Lease
		var err error
		suites.Guard(t, func() { l, err = q.Lease(ctx, holder) })
		ret := rec.Now()
		after := time.Now()
		if err != nil {
			if !errors.Is(err, task.ErrNoTask) {
				odd.add(fmt.Sprintf("%s = %v, want a lease or an error wrapping %q (R2)", what, err, task.ErrNoTask))
				return ""
			}
			rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linLease}, Output: linOutput{},
				Action: "calls " + what, Outcome: what + " " + outcome(err)})
			return ""
		}
		id := slices.Index(linIDs, l.Task.ID)
		got := fmt.Sprintf("%q (%s) attempt %d, token %s", l.Task.ID, l.Task.DocumentID, l.Attempt, linTokenName(l.Token))
		switch {
		case id < 0:
			odd.add(fmt.Sprintf("%s = %s, want one of the tasks enqueued, %q (R2)", what, got, linIDs))
			return ""
		case l.Holder != holder:
			odd.add(fmt.Sprintf("%s = %s to %q, want holder %q (R2)", what, got, l.Holder, holder))
			return ""
		case l.Token == "":
			odd.add(fmt.Sprintf("%s = %s, want a non-empty token (R4)", what, got))
			return ""
		case l.Expires.Before(before.Add(linVisibility)) || l.Expires.After(after.Add(linVisibility)):
			odd.add(fmt.Sprintf("%s = %s expiring %v after the call, want the visibility timeout, %v (R2)", what, got, l.Expires.Sub(before), linVisibility))
			return ""
		}
		if prev, seen := odd.issued(l.Token, what+" = "+got); seen {
			odd.add(fmt.Sprintf("%s = %s, whose token an earlier delivery had (%s), want a token never issued before (R4)", what, got, prev))
			return ""
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linLease},
			Output: linOutput{ok: true, id: id, doc: l.Task.DocumentID, attempt: l.Attempt, token: l.Token},
			Action: "calls " + what, Outcome: what + " = " + got})
		return l.Token
	default:
		in := linInput{kind: st.kind, token: tok}
		var what string
		before := time.Now()
		call := rec.Now()
		var l task.Lease
		var err error
		switch st.kind {
		case linAck:
			what = fmt.Sprintf("Ack(%s)", linTokenName(tok))
			suites.Guard(t, func() { err = q.Ack(ctx, tok) })
		case linNack:
			what = fmt.Sprintf("Nack(%s, 0)", linTokenName(tok))
			suites.Guard(t, func() { err = q.Nack(ctx, tok, 0) })
		default:
			what = fmt.Sprintf("Extend(%s, %v)", linTokenName(tok), linVisibility)
			suites.Guard(t, func() { l, err = q.Extend(ctx, tok, linVisibility) })
		}
		ret := rec.Now()
		after := time.Now()
		if err != nil && !errors.Is(err, task.ErrLeaseLost) {
			odd.add(fmt.Sprintf("%s = %v, want nil or an error wrapping %q (R5, R6, R7)", what, err, task.ErrLeaseLost))
			return ""
		}
		if st.kind == linExtend && err == nil && (l.Expires.Before(before.Add(linVisibility)) || l.Expires.After(after.Add(linVisibility))) {
			odd.add(fmt.Sprintf("%s = a lease expiring %v after the call, want %v after now (R5)", what, l.Expires.Sub(before), linVisibility))
			return ""
		}
		out := linOutput{ok: err == nil}
		result := outcome(err)
		if st.kind == linExtend && err == nil {
			out.id, out.doc, out.attempt, out.token = slices.Index(linIDs, l.Task.ID), l.Task.DocumentID, l.Attempt, l.Token
			result = fmt.Sprintf("= %q (%s) attempt %d, token %s", l.Task.ID, l.Task.DocumentID, l.Attempt, linTokenName(l.Token))
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: out,
			Action: "calls " + what, Outcome: what + " " + result})
	}
	return ""
}
