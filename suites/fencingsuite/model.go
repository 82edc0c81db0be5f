package fencingsuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
	"github.com/fourth-outcome/labkit/task"
)

// The model cases. The model is what the test knows from what it has
// observed: for each resource, the grant that holds it (its token, until
// when) and the largest token granted so far; for each key, the highest
// token the store has accepted and the value stored with it. It says what
// every call must observe, never how a lock service or a store gets there.

// modelNames are the resources and the keys, drawn to collide: the empty
// name, case, a trailing space, invalid UTF-8 that a []rune conversion
// turns into U+FFFD, and U+FFFD itself.
var modelNames = []string{"", "r", "R", "r ", "\xff", "\ufffd"}

// modelValues are what the writers write: the empty value, invalid UTF-8,
// a NUL.
var modelValues = []string{"", "report v1", "\xff\xfe", "nul\x00byte"}

// modelTTL is the lease of every lock service the sequences build.
const modelTTL = 10 * time.Second

// modelAdvances are how far the clock moves in one step, besides the exact
// instants around the expiries the model knows.
var modelAdvances = []time.Duration{time.Nanosecond, time.Second, modelTTL, 3 * 24 * time.Hour}

// showName quotes a resource or a key for a message.
func showName(s string) string { return strconv.QuoteToASCII(s) }

// modelGrant is a grant the lock service returned, and what the test knows
// of it.
type modelGrant struct {
	g        task.Grant
	released bool
}

// keyState is one state a key may be in: written or not, with the highest
// accepted token and the value stored with it.
type keyState struct {
	written bool
	token   task.FencingToken
	value   string
}

func (k keyState) String() string {
	if !k.written {
		return "nothing written"
	}
	return fmt.Sprintf("%q with token %d", k.value, k.token)
}

// accepts reports whether a key in state k accepts a write with token (R6,
// R7).
func (k keyState) accepts(token task.FencingToken) bool {
	return token != 0 && (!k.written || token >= k.token)
}

// fencingModel is the abstract state of one sequence.
type fencingModel struct {
	seq   *modelcheck.Seq
	h     *suites.History
	locks task.LockService
	store task.FencedStore
	kv    *memKV

	// current is the grant of each resource the test last saw granted;
	// top is the largest token granted for each resource.
	current map[string]*modelGrant
	top     map[string]task.FencingToken
	grants  []*modelGrant // every grant, in order
	// keys holds, for each key, every state it may be in: one, unless a
	// Put failed after storing its value and the store has not yet shown
	// which state it sees.
	keys    map[string][]keyState
	tried   []task.FencingToken // every token written with, accepted or not
	started []*suites.Call
	n       int
}

// call runs f in a goroutine of its own and fails the step if it does not
// return at once (a lock that was never unlocked, a channel nobody reads).
func (m *fencingModel) call(what string, f func()) {
	c := suites.Go(f)
	m.started = append(m.started, c)
	for i := 0; i < 50 && !c.Returned(); i++ {
		runtime.Gosched()
	}
	if !c.Settle() {
		m.h.Record("test", what, "still waiting")
		m.seq.Fatalf("%s did not return: it waits for something (a lock left locked by an earlier call, or a call that failed), want an answer at once (R2, R8, R10, R11)", what)
	}
}

func (m *fencingModel) actor() string {
	m.n++
	return fmt.Sprintf("worker %d", m.n)
}

// drawCtx draws the context of a call: background, or one already
// cancelled.
func drawCtx(t *rapid.T) (context.Context, bool) {
	if rapid.IntRange(0, 5).Draw(t, "cancelled") == 0 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, true
	}
	return context.Background(), false
}

// holds reports whether g holds its resource now.
func (m *fencingModel) holds(g *modelGrant) bool {
	return g != nil && !g.released && time.Now().Before(g.g.Expires)
}

func (m *fencingModel) stepAcquire(t *rapid.T) {
	resource := rapid.SampledFrom(modelNames).Draw(t, "resource")
	ctx, cancelled := drawCtx(t)
	// Two workers' names, so that a holder asks again and a worker
	// restarts under its own name.
	actor := rapid.SampledFrom([]string{"worker A", "worker B"}).Draw(t, "holder")
	what := fmt.Sprintf("Acquire(%s)", showName(resource))
	var g task.Grant
	var err error
	m.call(what, func() { g, err = m.locks.Acquire(ctx, resource, actor) })
	action := what
	if cancelled {
		action += " with a cancelled context"
	}
	m.h.Record(actor, action, describeGrant(g, err))
	now := time.Now()
	cur := m.current[resource]
	switch {
	case cancelled:
		if err == nil {
			m.grants = append(m.grants, &modelGrant{g: g, released: true})
			m.seq.Fatalf("%s with a cancelled context = %s, want an error wrapping %q and no grant (R10)", what, grantString(g, err), context.Canceled)
		}
		if !errors.Is(err, context.Canceled) {
			m.seq.Fatalf("%s with a cancelled context = %s, want an error wrapping %q (R10)", what, grantString(g, err), context.Canceled)
		}
	case m.holds(cur):
		if err == nil {
			m.seq.Fatalf("%s at %s while token %d holds it until %s = %s, want an error wrapping %q: one holder at a time, the holder itself included (R2)", what, at(now), cur.g.Token, at(cur.g.Expires), grantString(g, err), task.ErrLockHeld)
		}
		if !errors.Is(err, task.ErrLockHeld) {
			m.seq.Fatalf("%s at %s while token %d holds it = %s, want an error wrapping %q (R2)", what, at(now), cur.g.Token, grantString(g, err), task.ErrLockHeld)
		}
	default:
		why := "a resource never granted"
		if cur != nil {
			switch {
			case cur.released:
				why = fmt.Sprintf("its grant with token %d was released", cur.g.Token)
			default:
				why = fmt.Sprintf("its grant with token %d expired at %s (R3: from that instant on)", cur.g.Token, at(cur.g.Expires))
			}
		}
		if err != nil {
			m.seq.Fatalf("%s at %s = %s, want a grant: the resource is free, %s (R1, R2, R3)", what, at(now), grantString(g, err), why)
		}
		want := task.Grant{Resource: resource, Holder: actor, Token: g.Token, Expires: now.Add(modelTTL)}
		if g != want {
			m.seq.Fatalf("%s at %s = %s, want resource %s, holder %q and Expires %s, TTL (%v) after the Acquire (R1)", what, at(now), grantString(g, err), showName(resource), actor, at(want.Expires), modelTTL)
		}
		if g.Token == 0 {
			m.seq.Fatalf("%s = %s, want a token other than 0 (R1)", what, grantString(g, err))
		}
		if top, ok := m.top[resource]; ok && g.Token <= top {
			m.seq.Fatalf("%s at %s = %s after a grant of %s with token %d, want a larger token: every grant of a resource carries a larger token than every earlier one (R4)", what, at(now), grantString(g, err), showName(resource), top)
		}
		mg := &modelGrant{g: g}
		m.current[resource], m.top[resource] = mg, g.Token
		m.grants = append(m.grants, mg)
	}
}

func (m *fencingModel) stepRelease(t *rapid.T) {
	if len(m.grants) == 0 {
		t.SkipNow()
	}
	mg := rapid.SampledFrom(m.grants).Draw(t, "grant")
	ctx, cancelled := drawCtx(t)
	g := mg.g
	what := fmt.Sprintf("Release(token %d of %s)", g.Token, showName(g.Resource))
	var err error
	m.call(what, func() { err = m.locks.Release(ctx, g) })
	action := what
	if cancelled {
		action += " with a cancelled context"
	}
	m.h.Record(g.Holder, action, describeErr(err, "released"))
	now := time.Now()
	current := m.current[g.Resource] == mg && m.holds(mg)
	switch {
	case cancelled:
		if !errors.Is(err, context.Canceled) {
			m.seq.Fatalf("%s with a cancelled context = %v, want an error wrapping %q and nothing released (R10)", what, err, context.Canceled)
		}
	case current:
		if err != nil {
			m.seq.Fatalf("%s at %s = %v, want nil: it is the current grant, held until %s (R5)", what, at(now), err, at(g.Expires))
		}
		mg.released = true
	default:
		why := "it was released already"
		switch {
		case m.current[g.Resource] != mg:
			why = fmt.Sprintf("a later grant (token %d) superseded it", m.current[g.Resource].g.Token)
		case !mg.released:
			why = fmt.Sprintf("it expired at %s", at(g.Expires))
		}
		if !errors.Is(err, task.ErrLockLost) {
			m.seq.Fatalf("%s at %s = %v, want an error wrapping %q: %s (R5)", what, at(now), err, task.ErrLockLost, why)
		}
	}
}

// drawToken draws a write's token: one the lock service granted, one next
// to a key's highest, 0, 1 or 2^64-1.
func (m *fencingModel) drawToken(t *rapid.T, key string) task.FencingToken {
	choices := []task.FencingToken{0, 1, 2, math.MaxUint64, math.MaxUint64 - 1}
	for _, g := range m.grants {
		choices = append(choices, g.g.Token)
	}
	for _, tok := range m.tried {
		choices = append(choices, tok, tok-1)
	}
	for _, k := range m.keys[key] {
		if k.written {
			choices = append(choices, k.token, k.token-1, k.token+1)
		}
	}
	return rapid.SampledFrom(choices).Draw(t, "token")
}

// kvFault is what the KV does to one call.
type kvFault int

const (
	faultNone      kvFault = iota
	faultGet               // every Get fails
	faultPutBefore         // every Put fails, storing nothing
	faultPutAfter          // every Put stores its value and then fails
	faultCancelled         // the call's context is cancelled before it
	faultCount
)

func (f kvFault) String() string {
	return [...]string{"", " while the KV's Get fails", " while the KV's Put fails before storing", " while the KV's Put stores the value and then fails", " with a cancelled context"}[f]
}

// setFault makes the KV fail as f says until the returned function is
// called.
func (m *fencingModel) setFault(f kvFault) func() {
	kv := m.kv
	switch f {
	case faultGet, faultPutBefore, faultPutAfter:
	default:
		return func() {}
	}
	kv.setHook(func(_ context.Context, op, key string, v task.FencedValue) error {
		switch {
		case f == faultGet && op == "Get", f == faultPutBefore && op == "Put":
			return fmt.Errorf("kv %s %q: %w", op, key, errKV)
		case f == faultPutAfter && op == "Put":
			kv.mu.Lock()
			kv.values[key] = v
			kv.puts++
			kv.mu.Unlock()
			return fmt.Errorf("kv %s %q (after storing): %w", op, key, errKV)
		}
		return nil
	})
	return func() { kv.setHook(nil) }
}

func (m *fencingModel) states(key string) []keyState {
	if s, ok := m.keys[key]; ok {
		return s
	}
	return []keyState{{}}
}

func showStates(s []keyState) string {
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = k.String()
	}
	if len(parts) == 1 {
		return "the key holds " + parts[0]
	}
	return "the key holds " + fmt.Sprint(parts) + " (a Put failed after storing: either is allowed until the store shows which)"
}

func (m *fencingModel) stepWrite(t *rapid.T) {
	key := rapid.SampledFrom(modelNames).Draw(t, "key")
	token := m.drawToken(t, key)
	value := rapid.SampledFrom(modelValues).Draw(t, "value")
	fault := kvFault(rapid.IntRange(0, int(faultCount)-1).Draw(t, "fault"))
	if rapid.IntRange(0, 1).Draw(t, "no fault") == 0 {
		fault = faultNone
	}
	ctx := context.Background()
	if fault == faultCancelled {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	what := writeCall(token, key, value)
	actor := m.actor()
	if !slices.Contains(m.tried, token) {
		m.tried = append(m.tried, token)
	}
	clear := m.setFault(fault)
	var err error
	m.call(what, func() { err = m.store.Write(ctx, token, key, value) })
	clear()
	m.h.Record(actor, what+fault.String(), describeErr(err, "accepted"))
	before := m.states(key)
	written := keyState{written: true, token: token, value: value}
	var accepting, refusing []keyState
	for _, k := range before {
		if k.accepts(token) {
			accepting = append(accepting, k)
		} else {
			refusing = append(refusing, k)
		}
	}
	state := showStates(before)
	switch fault {
	case faultNone:
		switch {
		case err == nil && len(accepting) > 0:
			m.keys[key] = []keyState{written}
		case err == nil:
			m.seq.Fatalf("%s = nil, want an error wrapping %q: %s, and a token lower than the highest accepted, or 0, is refused (R7, R9: keys are compared exactly)", what, task.ErrStaleToken, state)
		case errors.Is(err, task.ErrStaleToken) && len(refusing) > 0:
			m.keys[key] = refusing
		case len(accepting) == 0:
			m.seq.Fatalf("%s = %v, want an error wrapping %q: %s (R7)", what, err, task.ErrStaleToken, state)
		default:
			m.seq.Fatalf("%s = %v, want nil: %s, and a token at least the highest accepted, other than 0, is accepted (R6, R9: a token of another key fences nothing here)", what, err, state)
		}
	case faultCancelled:
		// R10 is checked before anything else; a token 0 may be refused
		// by its look alone.
		ok := errors.Is(err, context.Canceled) || (token == 0 && errors.Is(err, task.ErrStaleToken))
		if !ok {
			m.seq.Fatalf("%s with a cancelled context = %v, want an error wrapping %q and nothing written (R10)", what, err, context.Canceled)
		}
	case faultGet:
		ok := errors.Is(err, errKV) || (len(refusing) > 0 && errors.Is(err, task.ErrStaleToken))
		if !ok {
			m.seq.Fatalf("%s while the KV's Get fails = %v, want an error wrapping the KV's %q: without the key's token there is no check, and nothing is written (R11)", what, err, errKV)
		}
	case faultPutBefore, faultPutAfter:
		switch {
		case errors.Is(err, task.ErrStaleToken) && len(refusing) > 0:
			m.keys[key] = refusing
		case errors.Is(err, errKV) && len(accepting) > 0:
			if fault == faultPutAfter {
				// The KV holds the new value; a store that keeps
				// nothing of its own sees it, one that does may not.
				m.keys[key] = append(slices.Clone(before), written)
			}
		case len(accepting) == 0:
			m.seq.Fatalf("%s%s = %v, want an error wrapping %q: %s (R7)", what, fault, err, task.ErrStaleToken, state)
		default:
			m.seq.Fatalf("%s%s = %v, want an error wrapping the KV's %q: a failed Put is an error, never a success (R11)", what, fault, err, errKV)
		}
	}
}

func (m *fencingModel) stepRead(t *rapid.T) {
	key := rapid.SampledFrom(modelNames).Draw(t, "key")
	fault := faultNone
	switch rapid.IntRange(0, 5).Draw(t, "fault") {
	case 0:
		fault = faultGet
	case 1:
		fault = faultCancelled
	}
	ctx := context.Background()
	if fault == faultCancelled {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	what := fmt.Sprintf("Read(%s)", showName(key))
	clear := m.setFault(fault)
	var v task.FencedValue
	var ok bool
	var err error
	m.call(what, func() { v, ok, err = m.store.Read(ctx, key) })
	clear()
	m.h.Record("store", what+fault.String(), describeRead(v, ok, err))
	got := fmt.Sprintf("%v, %v, %v", v, ok, err)
	switch fault {
	case faultGet:
		if !errors.Is(err, errKV) {
			m.seq.Fatalf("%s while the KV's Get fails = %s, want an error wrapping the KV's %q, never \"nothing written\" (R11)", what, got, errKV)
		}
		return
	case faultCancelled:
		if !errors.Is(err, context.Canceled) {
			m.seq.Fatalf("%s with a cancelled context = %s, want an error wrapping %q (R10)", what, got, context.Canceled)
		}
		return
	}
	before := m.states(key)
	var match []keyState
	if err == nil {
		for _, k := range before {
			if k.written == ok && (!ok || (v.Value == k.value && v.Token == k.token)) {
				match = append(match, k)
			}
		}
	}
	if len(match) == 0 {
		m.seq.Fatalf("%s = %s, want what the key holds: %s (R6, R7, R9, R11)", what, got, showStates(before))
	}
	m.keys[key] = match
}

// stepAdvance moves the clock: to just before or exactly at an expiry the
// model knows, or by a drawn duration.
func (m *fencingModel) stepAdvance(t *rapid.T) {
	now := time.Now()
	var targets []time.Duration
	for _, mg := range m.current {
		if d := mg.g.Expires.Sub(now); d > 0 {
			targets = append(targets, d-time.Nanosecond, d)
		}
	}
	slices.Sort(targets)
	choices := append(targets, modelAdvances...)
	d := rapid.SampledFrom(choices).Draw(t, "advance")
	fakeclock.Advance(d)
	m.h.Note("%v pass: now %s", d, at(time.Now()))
}

// closeIt closes v if it has a Close method.
func closeIt(v any) {
	switch c := v.(type) {
	case interface{ Close() error }:
		_ = c.Close()
	case interface{ Close() }:
		c.Close()
	}
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 100, Steps: 30}, func(seq *modelcheck.Seq, tg target) {
		l, err := tg.build(modelTTL)
		if err != nil {
			seq.Fatalf("NewLocks(LockOptions{TTL: %v}) = %v, want a lock service (R1)", modelTTL, err)
		}
		kv := &memKV{h: seq.H, values: map[string]task.FencedValue{}}
		s := suites.Construct(func() task.FencedStore { return tg.newStore(kv) })
		m := &fencingModel{seq: seq, h: seq.H, locks: l, store: s, kv: kv,
			current: map[string]*modelGrant{}, top: map[string]task.FencingToken{}, keys: map[string][]keyState{}}
		defer func() {
			kv.setHook(nil)
			for _, c := range m.started {
				c.Settle()
			}
			closeIt(s)
			closeIt(l)
		}()
		seq.Repeat(map[string]func(*rapid.T){
			"acquire": m.stepAcquire,
			"release": m.stepRelease,
			"write":   m.stepWrite,
			"read":    m.stepRead,
			"advance": m.stepAdvance,
		})
	})
}

// The concurrent model. Every call is one operation of the history, on
// one key of the store or one resource of the lock service. Per key, a
// write is accepted exactly when its token is not 0 and at least the
// highest accepted, and a read sees the last accepted value; per resource,
// an Acquire is granted exactly when no grant holds it (the clock does not
// move, so only a release frees it), with a larger token than every
// earlier grant, and a Release succeeds exactly for the current grant.

type linKind int

const (
	linWrite linKind = iota
	linRead
	linAcquire
	linRelease
)

type linInput struct {
	part  string // "key k" or "resource r"
	kind  linKind
	token task.FencingToken // write, release
	value string            // write
}

type linOutput struct {
	ok    bool              // write accepted, read found a value, grant made, release done
	token task.FencingToken // read, grant
	value string            // read
}

type linState struct {
	// The store's key.
	written bool
	token   task.FencingToken
	value   string
	// The lock service's resource.
	holder task.FencingToken // 0: free
	top    task.FencingToken
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		switch in.kind {
		case linWrite:
			accept := in.token != 0 && (!s.written || in.token >= s.token)
			if out.ok != accept {
				return false, s
			}
			if accept {
				s.written, s.token, s.value = true, in.token, in.value
			}
			return true, s
		case linRead:
			return out.ok == s.written && (!out.ok || (out.token == s.token && out.value == s.value)), s
		case linAcquire:
			if !out.ok {
				return s.holder != 0, s
			}
			if s.holder != 0 || out.token <= s.top {
				return false, s
			}
			s.holder, s.top = out.token, out.token
			return true, s
		}
		if out.ok != (s.holder == in.token) {
			return false, s
		}
		if out.ok {
			s.holder = 0
		}
		return true, s
	},
}

func partitionByPart(ops []modelcheck.Op) [][]modelcheck.Op {
	byPart := map[string][]modelcheck.Op{}
	var parts []string
	for _, op := range ops {
		p := op.Input.(linInput).part
		if _, ok := byPart[p]; !ok {
			parts = append(parts, p)
		}
		byPart[p] = append(byPart[p], op)
	}
	slices.Sort(parts)
	out := make([][]modelcheck.Op, 0, len(parts))
	for _, p := range parts {
		out = append(out, byPart[p])
	}
	return out
}

const (
	linRounds  = 30
	linClients = 4
	linCalls   = 5
)

// linNames are few, so that calls collide.
var linNames = []string{"k1", ""}

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[target]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		plans := make([][]linInput, linClients)
		for c := range plans {
			for range linCalls {
				name := linNames[rng.IntN(len(linNames))]
				var in linInput
				switch k := rng.IntN(6); {
				case k < 2:
					in = linInput{part: "key " + name, kind: linWrite, token: task.FencingToken(rng.IntN(5)), value: fmt.Sprintf("v%d-%d", c, rng.IntN(100))}
				case k < 4:
					in = linInput{part: "key " + name, kind: linRead}
				default:
					// An Acquire, released right after if it is granted.
					in = linInput{part: "resource " + name, kind: linAcquire}
				}
				plans[c] = append(plans[c], in)
			}
		}
		var rec modelcheck.Recorder
		var odd []string
		var oddMu sync.Mutex
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, tg target) {
			l, err := tg.build(modelTTL)
			if err != nil {
				t.Errorf("NewLocks(LockOptions{TTL: %v}) = %v, want a lock service (R1)", modelTTL, err)
				return
			}
			suites.CloseAtEnd(t, l)
			kv := &memKV{values: map[string]task.FencedValue{}}
			s := suites.Construct(func() task.FencedStore { return tg.newStore(kv) })
			suites.CloseAtEnd(t, s)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, plan := range plans {
				wg.Go(func() {
					<-start
					for _, in := range plan {
						if msg := linCall(t, l, s, &rec, c, in); msg != "" {
							oddMu.Lock()
							odd = append(odd, msg)
							oddMu.Unlock()
						}
					}
				})
			}
			close(start)
			wg.Wait()
		})
		if t.Failed() {
			return
		}
		if len(odd) > 0 {
			t.Errorf("%s", slices.Min(odd))
			return
		}
		histories = append(histories, rec.Ops())
	}
	modelcheck.Linearizable(t, h, linModel, partitionByPart, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

// linCall makes one planned call (an Acquire and, if granted, its
// Release) and records it; it returns a message for an answer that no
// state allows, "" otherwise.
func linCall(t *testing.T, l task.LockService, s task.FencedStore, rec *modelcheck.Recorder, client int, in linInput) string {
	ctx := context.Background()
	name := in.part[len("key "):]
	switch in.kind {
	case linWrite:
		call := rec.Now()
		var err error
		suites.Guard(t, func() { err = s.Write(ctx, in.token, name, in.value) })
		ret := rec.Now()
		what := writeCall(in.token, name, in.value)
		if err != nil && !errors.Is(err, task.ErrStaleToken) {
			return fmt.Sprintf("%s = %v, want nil or an error wrapping %q: the KV did not fail (R6, R7)", what, err, task.ErrStaleToken)
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: linOutput{ok: err == nil},
			Action: "calls " + what, Outcome: what + " " + describeErr(err, "accepted")})
	case linRead:
		call := rec.Now()
		var v task.FencedValue
		var ok bool
		var err error
		suites.Guard(t, func() { v, ok, err = s.Read(ctx, name) })
		ret := rec.Now()
		what := fmt.Sprintf("Read(%q)", name)
		if err != nil {
			return fmt.Sprintf("%s = %v, %v, %v, want no error: the KV did not fail (R6)", what, v, ok, err)
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: linOutput{ok: ok, token: v.Token, value: v.Value},
			Action: "calls " + what, Outcome: what + " " + describeRead(v, ok, err)})
	case linAcquire:
		name = in.part[len("resource "):]
		actor := fmt.Sprintf("client %d", client+1)
		call := rec.Now()
		var g task.Grant
		var err error
		suites.Guard(t, func() { g, err = l.Acquire(ctx, name, actor) })
		ret := rec.Now()
		what := fmt.Sprintf("Acquire(%q)", name)
		if err != nil && !errors.Is(err, task.ErrLockHeld) {
			return fmt.Sprintf("%s = %s, want a grant or an error wrapping %q (R1, R2)", what, grantString(g, err), task.ErrLockHeld)
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: linOutput{ok: err == nil, token: g.Token},
			Action: "calls " + what, Outcome: what + " " + describeGrant(g, err)})
		if err != nil {
			return ""
		}
		rel := linInput{part: in.part, kind: linRelease, token: g.Token}
		call = rec.Now()
		suites.Guard(t, func() { err = l.Release(ctx, g) })
		ret = rec.Now()
		what = fmt.Sprintf("Release(token %d of %q)", g.Token, name)
		if err != nil && !errors.Is(err, task.ErrLockLost) {
			return fmt.Sprintf("%s = %v, want nil or an error wrapping %q (R5)", what, err, task.ErrLockLost)
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: rel, Output: linOutput{ok: err == nil},
			Action: "calls " + what, Outcome: what + " " + describeErr(err, "released")})
	}
	return ""
}
