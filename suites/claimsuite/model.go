package claimsuite

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
)

// The model cases. The model is what the test knows about each key from
// what it has observed: a key is free, pending (a call's work is running,
// held by the test), or done with the value its work returned. It says
// what any call must observe, never how a store gets there.

// modelKeys are groups of keys drawn to collide in every way a store may
// merge two keys: case and spaces, two encodings of one letter, invalid
// UTF-8 bytes that a []rune conversion turns into the same U+FFFD (and
// U+FFFD itself), a NUL, the empty key, and two long keys that differ only
// in their last byte. A sequence works on two groups, so that its calls
// meet on the same keys again and again.
var modelKeys = [][]string{
	{"", " "},
	{"k", "K", "k "},
	{"\xff", "\xfe", "\ufffd"},
	{"caf\u00e9", "cafe\u0301"},
	{"a", "a\x00"},
	{strings.Repeat("x", 70_000) + "1", strings.Repeat("x", 70_000) + "2"},
}

// modelValues are what the work returns: the empty value, invalid UTF-8,
// a NUL.
var modelValues = []string{"", "signed:doc-42", "\xff\xfe", "\ufffd", "nul\x00byte"}

// modelErrors are the failures the work returns.
var modelErrors = []error{
	errDeclined,
	fmt.Errorf("dial provider: %w", context.DeadlineExceeded),
	context.Canceled,
}

// modelAdvances are how far the clock moves in one step: claims and
// results never expire in this lab.
var modelAdvances = []time.Duration{time.Second, time.Hour, 25 * time.Hour, 8 * 24 * time.Hour, 400 * 24 * time.Hour}

// showKey quotes a key for a message, abbreviating a long one.
func showKey(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%+q… (%d bytes)", s[:12], len(s))
	}
	return strconv.QuoteToASCII(s)
}

// outcome is what a work function returns.
type outcome struct {
	value string
	err   error
	quiet bool // not recorded: the sequence is over
}

func (o outcome) String() string {
	if o.err == nil {
		return fmt.Sprintf("%s, nil", showKey(o.value))
	}
	return fmt.Sprintf("%s, %q", showKey(o.value), o.err)
}

func drawOutcome(t *rapid.T) outcome {
	o := outcome{value: rapid.SampledFrom(modelValues).Draw(t, "value")}
	if rapid.IntRange(0, 2).Draw(t, "fails") == 0 {
		o.err = rapid.SampledFrom(modelErrors).Draw(t, "error")
	}
	return o
}

// held is a call whose work the test holds: it has claimed its key and
// waits for the test to say what the work returns.
type held struct {
	actor   string
	key     string
	cancel  context.CancelFunc
	release chan outcome // the work returns what is sent here
	call    *suites.Call
	got     *result // what Do returned, once call has returned
}

// claimModel is the abstract state: the keys the test has seen done (with
// their values) and the calls it holds.
type claimModel struct {
	s       target
	keys    []string // the keys this sequence works on
	h       *suites.History
	seq     *modelcheck.Seq
	done    map[string]string
	pending map[string]*held
	all     []*held        // every held call, released at the end
	started []*suites.Call // every call, waited for at the end
	n       int            // calls so far
}

// call starts Do(ctx, key, work) in a goroutine of its own and returns the
// call (Settle tells whether it answered or is stuck) and where its result
// will be; a panic in Do is the result's error.
func (m *claimModel) call(ctx context.Context, key string, work func(context.Context) (string, error)) (*suites.Call, *result) {
	var r result
	call := suites.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("Do panicked: %v", p)
			}
		}()
		r.value, r.err = m.s.Do(ctx, key, work)
	})
	m.started = append(m.started, call)
	// Most calls return at once: look a few times before Settle reads
	// every goroutine's stack.
	for i := 0; i < 50 && !call.Returned(); i++ {
		runtime.Gosched()
	}
	return call, &r
}

// expectAt checks what a call on a key that is not free must observe.
func (m *claimModel) expectAt(actor, key string, r result, runs int) {
	seq := m.seq
	if h, ok := m.pending[key]; ok {
		switch {
		case runs > 0:
			seq.Fatalf("Do(%s) while %s's work for that key is running ran the work: want no second execution and an error wrapping %v (R2)", showKey(key), h.actor, m.s.errInProgress)
		case !errors.Is(r.err, m.s.errInProgress):
			seq.Fatalf("Do(%s) while %s's work for that key is running = %s, %v, want an error wrapping %v (R2)", showKey(key), h.actor, showKey(r.value), r.err, m.s.errInProgress)
		}
		return
	}
	v := m.done[key]
	switch {
	case runs > 0:
		seq.Fatalf("Do(%s) after its work succeeded with %s ran the work again: want the stored value, and no second execution (R4)", showKey(key), showKey(v))
	case r.err != nil || r.value != v:
		seq.Fatalf("Do(%s) after its work succeeded with %s = %s, %v, want the stored %s, nil (R4, and R7: keys are compared byte for byte)", showKey(key), showKey(v), showKey(r.value), r.err, showKey(v))
	}
}

// expectFirst checks what the first call on a free key observed: its work
// ran once and it got exactly what the work returned.
func (m *claimModel) expectFirst(key string, o outcome, r result, runs int) {
	seq := m.seq
	switch {
	case runs == 0:
		seq.Fatalf("Do(%s) on a key that is free (never seen, or its work failed) = %s, %v without running the work, want the work run and its result (R1, R5, and R7: no other key may answer for it)", showKey(key), showKey(r.value), r.err)
	case runs > 1:
		seq.Fatalf("Do(%s) ran the work %d times, want once (R1)", showKey(key), runs)
	case r.value != o.value || r.err != o.err:
		seq.Fatalf("Do(%s) whose work returned %s = %s, %v, want both unchanged: the same string and the very same error value (R1, R6)", showKey(key), o, showKey(r.value), r.err)
	}
	if o.err == nil {
		m.done[key] = o.value
	}
}

// settle waits until call has returned or is stuck, and fails the step if
// it is stuck.
func (m *claimModel) settle(call *suites.Call, what string) {
	if !call.Settle() {
		m.h.Record("test", what, "still waiting")
		m.seq.Fatalf("%s did not return: it waits for something (a lock held while another key's work runs, or the first caller's result), want an answer at once (R2, R8)", what)
	}
}

// releaseAll lets every held work return, so that a failing sequence's
// calls end before its bubble does.
func (m *claimModel) releaseAll() {
	for _, h := range m.all {
		select {
		case h.release <- outcome{value: "released at the end", quiet: true}:
		default:
		}
	}
	for _, h := range m.all {
		h.cancel()
	}
	// A call that polls for another caller's result sleeps between looks:
	// move the clock until every call has returned, or is stuck on
	// something no clock can end (it is then left for the bubble to
	// report).
	for range 60 {
		waiting := false
		for _, c := range m.started {
			if !c.Settle() {
				waiting = true
			}
		}
		if !waiting {
			return
		}
		fakeclock.Advance(time.Minute)
	}
}

func (m *claimModel) drawKey(t *rapid.T) string {
	return rapid.SampledFrom(m.keys).Draw(t, "key")
}

func (m *claimModel) actor() string {
	m.n++
	return fmt.Sprintf("caller %d", m.n)
}

// stepDo calls Do on a drawn key with work that returns a drawn outcome.
func (m *claimModel) stepDo(t *rapid.T) {
	key, o := m.drawKey(t), drawOutcome(t)
	actor := m.actor()
	var c counter
	call, r := m.call(context.Background(), key, c.work(nil, actor, key, nil, o.value, o.err))
	m.settle(call, fmt.Sprintf("Do(%s)", showKey(key)))
	runs := int(c.n.Load())
	m.h.Record(actor, fmt.Sprintf("Do(%s), work would return %s", showKey(key), o), m.describe(*r, runs))
	if m.free(key) {
		m.expectFirst(key, o, *r, runs)
		return
	}
	m.expectAt(actor, key, *r, runs)
}

func (m *claimModel) free(key string) bool {
	_, pending := m.pending[key]
	_, done := m.done[key]
	return !pending && !done
}

func (m *claimModel) describe(r result, runs int) string {
	s := m.s.describe(r.value, r.err)
	switch runs {
	case 0:
		return s + " (the work did not run)"
	case 1:
		return s + " (the work ran)"
	}
	return fmt.Sprintf("%s (the work ran %d times)", s, runs)
}

// stepHold calls Do on a drawn key with work that the test holds until a
// later step, under a context the test may cancel or let expire.
func (m *claimModel) stepHold(t *rapid.T) {
	key := m.drawKey(t)
	deadline := rapid.Bool().Draw(t, "with a deadline")
	actor := m.actor()
	ctx, cancel := context.WithCancel(context.Background())
	if deadline {
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	}
	hd := &held{actor: actor, key: key, cancel: cancel, release: make(chan outcome, 1)}
	var c counter
	started := make(chan struct{})
	var once sync.Once
	work := func(ctx context.Context) (string, error) {
		c.n.Add(1)
		once.Do(func() { close(started) })
		o := <-hd.release
		if o.quiet {
			return o.value, o.err
		}
		m.h.Recordf(actor, fmt.Sprintf("work for %s returns", showKey(key)), "%s", o)
		return o.value, o.err
	}
	hd.call, hd.got = m.call(ctx, key, work)
	m.all = append(m.all, hd)
	returned := hd.call.Settle()
	running := false
	select {
	case <-started:
		running = !hd.call.Returned()
	default:
	}
	what := fmt.Sprintf("Do(%s)", showKey(key))
	switch {
	case running:
		note := "its work starts and waits"
		if deadline {
			note += " (the caller's context ends in a minute)"
		}
		m.h.Record(actor, what, note)
		if !m.free(key) {
			m.seq.Fatalf("%s on a key that is not free ran the work, want %s (R2, R4)", what, m.expected(key))
		}
		m.pending[key] = hd
	case !returned:
		m.h.Record(actor, what, "still waiting, without running the work")
		m.seq.Fatalf("%s did not return: it waits for something (a lock held while another key's work runs, or the first caller's result), want an answer at once (R2, R8)", what)
	default:
		runs := int(c.n.Load())
		m.h.Record(actor, what, m.describe(*hd.got, runs))
		if m.free(key) {
			m.seq.Fatalf("%s on a key that is free = %s, %v without running the work, want its work run (R1, R5, and R7: no other key may answer for it)", what, showKey(hd.got.value), hd.got.err)
		}
		m.expectAt(actor, key, *hd.got, runs)
	}
}

// expected says what a call on a key that is not free must get.
func (m *claimModel) expected(key string) string {
	if _, ok := m.pending[key]; ok {
		return fmt.Sprintf("an error wrapping %v", m.s.errInProgress)
	}
	return fmt.Sprintf("the stored %s, nil", showKey(m.done[key]))
}

// pickHeld draws a key and returns its held call, or skips the step if
// the key has none. Drawing the key, not an index among the held calls,
// keeps each step's meaning when rapid removes an earlier step.
func (m *claimModel) pickHeld(t *rapid.T) *held {
	hd, ok := m.pending[m.drawKey(t)]
	if !ok {
		t.SkipNow()
	}
	return hd
}

// stepFinish lets a held work return a drawn outcome.
func (m *claimModel) stepFinish(t *rapid.T) {
	hd := m.pickHeld(t)
	o := drawOutcome(t)
	delete(m.pending, hd.key)
	hd.release <- o
	m.settle(hd.call, fmt.Sprintf("%s's Do(%s), once its work returned", hd.actor, showKey(hd.key)))
	hd.cancel()
	m.h.Record(hd.actor, fmt.Sprintf("Do(%s) returns", showKey(hd.key)), m.s.describe(hd.got.value, hd.got.err))
	m.expectFirst(hd.key, o, *hd.got, 1)
}

// stepCancel cancels the context of a held call: whatever its work
// returns is still the outcome.
func (m *claimModel) stepCancel(t *rapid.T) {
	hd := m.pickHeld(t)
	hd.cancel()
	m.h.Record("test", fmt.Sprintf("cancel %s's context", hd.actor), "its work goes on")
}

// stepAdvance moves the clock.
func (m *claimModel) stepAdvance(t *rapid.T) {
	d := rapid.SampledFrom(modelAdvances).Draw(t, "advance")
	fakeclock.Advance(d)
	m.h.Note("%v pass", d)
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 100, Steps: 25}, func(seq *modelcheck.Seq, s target) {
		m := &claimModel{s: s, h: seq.H, seq: seq, done: map[string]string{}, pending: map[string]*held{}}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(modelKeys)-1), 2, 2, rapid.ID).Draw(seq.T, "groups") {
			m.keys = append(m.keys, modelKeys[i]...)
		}
		defer m.releaseAll()
		seq.Repeat(map[string]func(*rapid.T){
			"do":      m.stepDo,
			"hold":    m.stepHold,
			"finish":  m.stepFinish,
			"cancel":  m.stepCancel,
			"advance": m.stepAdvance,
		})
	})
}

// The concurrent model. Every Do is one or two operations of the history:
// a Do whose work ran is a claim (from its call to the start of its work)
// and a settlement (from the work's return to Do's return); any other Do
// is a lookup. Per key, a claim takes a free key, a settlement completes or
// frees it, a lookup sees "in progress" only while it is pending and a
// value only once it is done with that value.

type opKind int

const (
	opClaim opKind = iota
	opSettle
	opLookup
)

type linInput struct {
	key   string
	kind  opKind
	ok    bool   // settle: the work succeeded
	value string // settle: what it returned
}

type linOutput struct {
	inProgress bool
	done       bool
	value      string
}

type linState struct {
	pending, done bool
	value         string
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(linState), input.(linInput)
		free := !s.pending && !s.done
		switch in.kind {
		case opClaim:
			return free, linState{pending: true}
		case opSettle:
			if !s.pending {
				return false, s
			}
			if in.ok {
				return true, linState{done: true, value: in.value}
			}
			return true, linState{}
		}
		out := output.(linOutput)
		switch {
		case out.inProgress:
			return s.pending, s
		case out.done:
			return s.done && s.value == out.value, s
		}
		return false, s
	},
}

func partitionByKey(ops []modelcheck.Op) [][]modelcheck.Op {
	byKey := map[string][]modelcheck.Op{}
	var keys []string
	for _, op := range ops {
		k := op.Input.(linInput).key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	slices.Sort(keys)
	out := make([][]modelcheck.Op, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

const (
	linRounds  = 40
	linClients = 4
	linCalls   = 4
)

// linKeys are few, so that calls collide.
var linKeys = []string{"k1", "k2", ""}

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		plans := make([][]linPlan, linClients)
		for c := range plans {
			for range linCalls {
				p := linPlan{key: linKeys[rng.IntN(len(linKeys))], yields: rng.IntN(4)}
				p.value = fmt.Sprintf("v%d-%d", c, rng.IntN(100))
				if rng.IntN(3) == 0 {
					p.err = errDeclined
				}
				plans[c] = append(plans[c], p)
			}
		}
		var rec modelcheck.Recorder
		var odd oddAnswers
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, s target) {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, plan := range plans {
				wg.Go(func() {
					<-start
					for _, p := range plan {
						linDo(t, s, &rec, &odd, c, p)
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
	modelcheck.Linearizable(t, h, linModel, partitionByKey, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

// linPlan is one call a client makes in a round.
type linPlan struct {
	key    string
	value  string
	err    error
	yields int // times the work yields the processor, to widen the race
}

// oddAnswers collects answers that no state of a key allows (neither the
// work's result, nor "in progress", nor a stored value), whatever the
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
	return slices.Min(o.msgs)
}

// linDo makes one call and records it as one or two operations.
func linDo(t *testing.T, s target, rec *modelcheck.Recorder, odd *oddAnswers, client int, p linPlan) {
	var started, returned, ran atomic.Int64
	work := func(context.Context) (string, error) {
		started.Store(rec.Now())
		ran.Add(1)
		for range p.yields {
			runtime.Gosched()
		}
		returned.Store(rec.Now())
		return p.value, p.err
	}
	call := rec.Now()
	var v string
	var err error
	suites.Guard(t, func() { v, err = s.Do(context.Background(), p.key, work) })
	ret := rec.Now()
	action := fmt.Sprintf("Do(%q)", p.key)
	switch n := ran.Load(); {
	case n > 1:
		odd.add(fmt.Sprintf("%s ran its work %d times, want at most once (R1)", action, n))
		return
	case n == 1:
		if v != p.value || err != p.err {
			odd.add(fmt.Sprintf("%s whose work returned %q, %v = %q, %v, want both unchanged (R1)", action, p.value, p.err, v, err))
			return
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: started.Load(), Input: linInput{key: p.key, kind: opClaim},
			Action: "calls " + action, Outcome: fmt.Sprintf("%s: its work starts", action)})
		rec.Add(modelcheck.Op{Client: client, Call: returned.Load(), Return: ret, Input: linInput{key: p.key, kind: opSettle, ok: p.err == nil, value: p.value},
			Action:  fmt.Sprintf("%s: its work returns %q, %v", action, p.value, p.err),
			Outcome: fmt.Sprintf("%s returns them", action)})
		return
	}
	out := linOutput{}
	switch {
	case errors.Is(err, s.errInProgress):
		out.inProgress = true
	case err == nil:
		out.done, out.value = true, v
	default:
		odd.add(fmt.Sprintf("%s = %q, %v without running the work: no state of a key allows that answer, want the work run and its result, an error wrapping %v, or the stored value (R1, R2, R4)", action, v, err, s.errInProgress))
		return
	}
	rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{key: p.key, kind: opLookup}, Output: out,
		Action: "calls " + action, Outcome: fmt.Sprintf("%s %s (the work did not run)", action, s.describe(v, err))})
}
