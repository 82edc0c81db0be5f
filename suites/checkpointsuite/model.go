package checkpointsuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
	"github.com/fourth-outcome/labkit/task"
)

// The model case. A sequence is a series of worker processes that run the
// student's runner on a few tasks, one process at a time, each with at most
// one fault at a drawn point of a drawn step (the process crashing before or
// after a call, the durable storage failing before or after its write, the
// effect service failing before or after performing the effect, the context
// cancelled or its deadline passing, the step's Effect failing or
// panicking), and of a caller working the student's store directly (commits
// and loads of odd task IDs, with the caller changing the Values it gave or
// got). The model is what the test knows from what it saw: for every task,
// the checkpoints the store may hold (more than one only after a write that
// failed once it had landed), and for every run, the calls the runner made,
// in order. Each run is checked against the rules when it ends; the model
// says what the calls of a runner may be, never how a runner makes them.

// modelRunIDs are the tasks the processes run: multi-byte, invalid UTF-8,
// a separator inside, IDs that are prefixes of each other, and a long one.
var modelRunIDs = []string{"task-1", "tâche-ü", "t", "t/1", strings.Repeat("long-", 600), "\xff\xfe"}

// modelStoreIDs are the tasks the caller commits and loads directly: the
// empty ID (which a store may keep or refuse), and the same kinds of odd
// IDs.
var modelStoreIDs = []string{"", "s", "s/0", "\xff", "\ufffd", strings.Repeat("ü", 2000)}

// modelDraws are the values a step may draw, in order.
var modelDraws = [][]string{{}, {}, {"now"}, {"rand"}, {"rand", "now"}, {"now", "rand", "rand"}}

const modelMaxSteps = 4

func showID(s string) string {
	if len(s) > 40 {
		return strconv.QuoteToASCII(s[:20]) + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return strconv.QuoteToASCII(s)
}

// ---- the durable KV of the model: it keeps the very checkpoint Put is
// given, Values slice and all, and Get hands that slice out, as R1 says a KV
// may; the store must keep its own copy.

type modelKV struct {
	mu   sync.Mutex
	data map[string]task.Checkpoint
	// fault, when op is set, makes the next call of op fail, before its
	// effect or (a Put) after it.
	fault struct {
		op    string
		after bool
	}
}

func (kv *modelKV) arm(op string, after bool) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.fault.op, kv.fault.after = op, after
}

func (kv *modelKV) disarm() { kv.arm("", false) }

func (kv *modelKV) take(op string) (fail, after bool) {
	if kv.fault.op != op {
		return false, false
	}
	after = kv.fault.after
	kv.fault.op = ""
	return true, after
}

func (kv *modelKV) Get(ctx context.Context, taskID string) (task.Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return task.Checkpoint{}, false, err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if fail, _ := kv.take("get"); fail {
		return task.Checkpoint{}, false, fmt.Errorf("get %s: %w", showID(taskID), errStorage)
	}
	cp, ok := kv.data[taskID]
	return cp, ok, nil
}

func (kv *modelKV) Put(ctx context.Context, cp task.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	fail, after := kv.take("put")
	if fail && !after {
		return fmt.Errorf("put %s: %w", showID(cp.TaskID), errStorage)
	}
	kv.data[cp.TaskID] = cp
	if fail {
		return fmt.Errorf("put %s: %w (the write landed)", showID(cp.TaskID), errStorage)
	}
	return nil
}

// ---- checkpoints as the model keeps them ----

// ckState is one state a task's checkpoint may be in.
type ckState struct {
	found bool
	cp    task.Checkpoint // a deep copy
}

func (s ckState) String() string {
	if !s.found {
		return "no checkpoint"
	}
	return showCheckpoint(s.cp)
}

func showCheckpoint(cp task.Checkpoint) string {
	id := cp.TaskID
	cp.TaskID = showID(id)
	return cp.String()
}

func deepCopy(cp task.Checkpoint) task.Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}

func sameValue(a, b task.RecordedValue) bool {
	return a.Step == b.Step && a.Kind == b.Kind && a.Time.Equal(b.Time) && a.Rand == b.Rand
}

func sameValues(a, b []task.RecordedValue) bool {
	return slices.EqualFunc(a, b, sameValue)
}

func sameCk(a, b task.Checkpoint) bool {
	return a.TaskID == b.TaskID && a.Token == b.Token && a.Next == b.Next && a.Total == b.Total && sameValues(a.Values, b.Values)
}

// match returns the states of states that a Load answer (cp, found) is.
func match(states []ckState, cp task.Checkpoint, found bool) []ckState {
	var out []ckState
	for _, s := range states {
		if s.found == found && (!found || sameCk(s.cp, cp)) {
			out = append(out, s)
		}
	}
	return out
}

func showStates(states []ckState) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = s.String()
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "one of " + strings.Join(parts, " | ") + " (a write failed after it landed)"
}

func addState(states []ckState, s ckState) []ckState {
	for _, o := range states {
		if o.found == s.found && (!s.found || sameCk(o.cp, s.cp)) {
			return states
		}
	}
	return append(slices.Clone(states), s)
}

func valuesOfStep(vals []task.RecordedValue, step int) []task.RecordedValue {
	var out []task.RecordedValue
	for _, v := range vals {
		if v.Step == step {
			out = append(out, v)
		}
	}
	return out
}

func showVals(vals []task.RecordedValue) string {
	if len(vals) == 0 {
		return "none"
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = v.String()
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// ---- faults ----

// fault is what happens to a process at its drawn point.
type fault int

const (
	fNone         fault = iota
	fFailBefore         // the call fails without effect (a step: fails before drawing)
	fFailAfter          // the call takes effect, then fails (a step: draws, then fails)
	fKVGet              // the KV's Get under the store fails
	fKVPutBefore        // the KV's Put fails, writing nothing
	fKVPutAfter         // the KV's Put writes, then fails
	fCrashBefore        // the process dies before the call
	fCrashAfter         // the process dies after the call took effect
	fCancelBefore       // the caller cancels the context before the call
	fCancelAfter        // the caller cancels the context after the call
	fPanicBefore        // the step panics before drawing
	fPanicAfter         // the step panics after drawing
	fDeadline           // the step takes longer than the context's deadline
	fPause              // the process pauses before the call, until the test wakes it
)

func (f fault) String() string {
	return [...]string{"", "fails before its effect", "fails after its effect", "the KV's Get fails", "the KV's Put fails before writing", "the KV's Put writes, then fails", "the process crashes before it", "the process crashes after it", "the caller cancels the context before it", "the caller cancels the context after it", "the step panics before drawing", "the step panics after drawing", "the context's deadline passes during it", "the process pauses before it (a long GC pause, a stalled VM)"}[f]
}

func (f fault) after() bool {
	return f == fFailAfter || f == fCrashAfter || f == fCancelAfter || f == fPanicAfter
}

var pointFaults = map[string][]fault{
	"load":   {fKVGet, fCrashBefore, fCrashAfter, fCancelBefore, fCancelAfter},
	"effect": {fFailBefore, fFailAfter, fCrashBefore, fCrashAfter, fCancelBefore, fCancelAfter, fPanicBefore, fPanicAfter, fDeadline},
	"values": {fKVGet, fKVPutBefore, fKVPutAfter, fCrashBefore, fCrashAfter, fCancelBefore, fCancelAfter},
	"apply":  {fFailBefore, fFailAfter, fCrashBefore, fCrashAfter, fCancelBefore, fCancelAfter},
	"commit": {fKVGet, fKVPutBefore, fKVPutAfter, fCrashBefore, fCrashAfter, fCancelBefore, fCancelAfter},
}

// stepPanic is the value a panicking step panics with.
type stepPanic struct{ step int }

func (p stepPanic) String() string {
	return fmt.Sprintf("step %d panicked: the venue API client hit a nil map", p.step)
}

// ---- one run of a process, as the test observed it ----

type opKind int

const (
	opLoad opKind = iota
	opEffect
	opCommit
	opApply
)

type op struct {
	kind      opKind
	step      int
	cancelled bool // the caller had cancelled the context (or its deadline had passed) when the call began

	// opLoad, opCommit
	cp    task.Checkpoint
	found bool
	// opEffect: the values the step got, and how it ended
	got      []task.RecordedValue
	effErr   error
	panicked bool
	// opApply
	key, payload string
	// every op
	err   error
	fault fault // the fault injected into this call, if any
	after bool  // for a crash: the call took effect first
}

// runRec is one Run of one process: its plan and the calls it made.
type runRec struct {
	p      *mproc
	taskID string
	n      int
	point  string // the drawn point, "values/1"
	f      fault
	fired  bool

	ctx      context.Context
	cancel   context.CancelFunc
	deadline bool

	mu        sync.Mutex
	cancelled bool
	ops       []op
	cur       int // the step whose Effect ran last, -1 before any
	nowOut    []time.Time
	randOut   []uint64
	crashed   chan struct{}
	never     chan struct{}
	crashOnce sync.Once
	paused    chan struct{}
	resume    chan struct{}
	ending    bool // the sequence is over: a paused process ends there
	pausedAt  int  // the index of the op the process paused in
	result    error
	panicVal  any
	call      *suites.Call
}

// mproc is one worker process: a runner of the student's and its token.
type mproc struct {
	m      *ckModel
	name   string
	token  task.FencingToken
	runner Runner
	dead   bool

	mu  sync.Mutex
	cur *runRec
}

func (p *mproc) rec() *runRec {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// at returns the fault that fires at point in phase after, once per run.
func (r *runRec) at(point string, after bool) fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fired || r.point != point || r.f.after() != after {
		return fNone
	}
	r.fired = true
	return r.f
}

func (r *runRec) isCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled || (r.deadline && r.ctx.Err() != nil)
}

func (r *runRec) doCancel(point string) {
	r.p.m.recordf(r.p.name, point, "the caller cancels Run's context")
	r.mu.Lock()
	r.cancelled = true
	r.mu.Unlock()
	r.cancel()
}

func (r *runRec) crash(point string) {
	r.p.m.record(r.p.name, point, "the process crashes here: nothing more runs")
	r.crashOnce.Do(func() { close(r.crashed) })
	<-r.never
	runtime.Goexit() // the sequence is over: end the dead process's goroutine
}

func (r *runRec) pause(i int, point string) {
	r.p.m.record(r.p.name, point, "the process pauses here (a long GC pause, a stalled VM)")
	r.mu.Lock()
	r.pausedAt = i
	r.mu.Unlock()
	close(r.paused)
	<-r.resume
	r.mu.Lock()
	ending := r.ending
	r.mu.Unlock()
	if ending {
		runtime.Goexit() // the sequence ended while the process was paused
	}
	r.p.m.record(r.p.name, point, "the process wakes up and carries on")
}

func (r *runRec) add(o op) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, o)
	return len(r.ops) - 1
}

func (r *runRec) set(i int, f func(*op)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.ops[i])
}

// runStore is the student's store as a process's runner sees it.
type runStore struct{ p *mproc }

func (v runStore) Load(ctx context.Context, taskID string) (task.Checkpoint, bool, error) {
	r := v.p.rec()
	m := r.p.m
	i := r.add(op{kind: opLoad, cancelled: r.isCancelled()})
	f := r.at("load", false)
	switch f {
	case fCrashBefore:
		r.set(i, func(o *op) { o.fault = f })
		r.crash("Load")
	case fCancelBefore:
		r.doCancel("Load")
	case fKVGet:
		m.kv.arm("get", false)
	}
	cp, found, err := m.store.Load(ctx, taskID)
	m.kv.disarm()
	out := deepCopy(cp)
	r.set(i, func(o *op) { o.cp, o.found, o.err, o.fault = out, found, err, f })
	switch {
	case err != nil:
		m.recordf(r.p.name, "Load("+showID(taskID)+")", "error: %v", err)
	case !found:
		m.record(r.p.name, "Load("+showID(taskID)+")", "no checkpoint")
	default:
		m.record(r.p.name, "Load("+showID(taskID)+")", showCheckpoint(out))
	}
	switch f2 := r.at("load", true); f2 {
	case fCrashAfter:
		r.set(i, func(o *op) { o.fault, o.after = f2, true })
		r.crash("Load")
	case fCancelAfter:
		r.doCancel("Load")
	}
	return cp, found, err
}

func (v runStore) Commit(ctx context.Context, cp task.Checkpoint) error {
	r := v.p.rec()
	m := r.p.m
	r.mu.Lock()
	cur := r.cur
	r.mu.Unlock()
	point := fmt.Sprintf("values/%d", cp.Next)
	if cur >= 0 && cp.Next > cur {
		point = fmt.Sprintf("commit/%d", cp.Next-1)
	}
	i := r.add(op{kind: opCommit, cp: deepCopy(cp), step: cp.Next, cancelled: r.isCancelled()})
	what := "Commit(" + showCheckpoint(cp) + ")"
	f := r.at(point, false)
	switch f {
	case fCrashBefore:
		r.set(i, func(o *op) { o.fault = f })
		r.crash(what)
	case fPause:
		r.set(i, func(o *op) { o.fault = f })
		r.pause(i, what)
	case fCancelBefore:
		r.doCancel(what)
	case fKVGet:
		m.kv.arm("get", false)
	case fKVPutBefore:
		m.kv.arm("put", false)
	case fKVPutAfter:
		m.kv.arm("put", true)
	}
	err := m.store.Commit(ctx, cp)
	m.kv.disarm()
	r.set(i, func(o *op) { o.err, o.fault = err, f })
	m.record(r.p.name, what, outcome(err, "committed"))
	switch f2 := r.at(point, true); f2 {
	case fCrashAfter:
		r.set(i, func(o *op) { o.fault, o.after = f2, true })
		r.crash(what)
	case fCancelAfter:
		r.doCancel(what)
	}
	return err
}

// runSink is the effect service as a process's runner sees it.
type runSink struct{ p *mproc }

func (v runSink) Apply(ctx context.Context, key, payload string) error {
	r := v.p.rec()
	m := r.p.m
	r.mu.Lock()
	cur := r.cur
	r.mu.Unlock()
	point := fmt.Sprintf("apply/%d", cur)
	what := fmt.Sprintf("Apply(%s)", showID(key))
	i := r.add(op{kind: opApply, step: cur, key: key, payload: payload, cancelled: r.isCancelled()})
	f := r.at(point, false)
	switch f {
	case fCrashBefore:
		r.set(i, func(o *op) { o.fault = f })
		r.crash(what)
	case fPause:
		r.set(i, func(o *op) { o.fault = f })
		r.pause(i, what)
	case fCancelBefore:
		r.doCancel(what)
	case fFailBefore:
		err := fmt.Errorf("apply %s: %w", showID(key), errService)
		r.set(i, func(o *op) { o.err, o.fault = err, f })
		m.recordf(r.p.name, what, "error: %v (not performed)", err)
		return err
	}
	performed, err := m.sink.apply(key, payload)
	switch {
	case err != nil:
		m.record(r.p.name, what, "error: "+err.Error())
	case performed:
		m.recordf(r.p.name, what, "performed: %q", clip(payload))
	default:
		m.record(r.p.name, what, "already performed with this payload: nothing done again")
	}
	f2 := r.at(point, true)
	switch f2 {
	case fCrashAfter:
		r.set(i, func(o *op) { o.err, o.fault, o.after = err, f2, true })
		r.crash(what)
	case fCancelAfter:
		r.doCancel(what)
	case fFailAfter:
		err = fmt.Errorf("apply %s: %w (the effect was performed, the answer lost)", showID(key), errService)
		m.recordf(r.p.name, what, "the answer is lost: %v", err)
	}
	if f2 != fNone {
		f = f2
	}
	r.set(i, func(o *op) { o.err, o.fault = err, f })
	return err
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:60] + "…" + s[len(s)-40:]
	}
	return s
}

// recorder is what a step's Effect is handed, seen by the test.
func (m *ckModel) steps(p *mproc, t *taskModel, n int) []task.TaskStep {
	out := make([]task.TaskStep, n)
	for i := range n {
		name := stepNames[i%len(stepNames)]
		draws := t.spec[i]
		out[i] = task.TaskStep{Name: name, Effect: func(rec task.Recorder) (string, error) {
			r := p.rec()
			point := fmt.Sprintf("effect/%d", i)
			r.mu.Lock()
			r.cur = i
			r.mu.Unlock()
			k := r.add(op{kind: opEffect, step: i, cancelled: r.isCancelled()})
			what := fmt.Sprintf("step %d (%s)", i, name)
			f := r.at(point, false)
			switch f {
			case fCrashBefore:
				r.set(k, func(o *op) { o.fault = f })
				r.crash(what)
			case fCancelBefore:
				r.doCancel(what)
			case fDeadline:
				m.recordf(p.name, what, "takes 31s: Run's deadline, 30s after it started, passes")
				time.Sleep(31 * time.Second)
			case fFailBefore:
				err := fmt.Errorf("%s: %w", name, errStep)
				r.set(k, func(o *op) { o.effErr, o.fault = err, f })
				m.recordf(p.name, what, "fails: %v", err)
				return "", err
			case fPanicBefore:
				r.set(k, func(o *op) { o.panicked, o.fault = true, f })
				m.record(p.name, what, "panics")
				panic(stepPanic{i})
			}
			var got []task.RecordedValue
			var shown []string
			for _, d := range draws {
				switch d {
				case "now":
					v := rec.Now()
					got = append(got, task.RecordedValue{Step: i, Kind: task.RecordedTime, Time: v})
					shown = append(shown, v.UTC().Format(time.RFC3339Nano))
				case "rand":
					v := rec.Rand()
					got = append(got, task.RecordedValue{Step: i, Kind: task.RecordedRand, Rand: v})
					shown = append(shown, fmt.Sprint(v))
				}
			}
			r.set(k, func(o *op) { o.got = got })
			m.recordf(p.name, what, "computes its effect%s", describeValues(shown))
			switch f2 := r.at(point, true); f2 {
			case fCrashAfter:
				r.set(k, func(o *op) { o.fault, o.after = f2, true })
				r.crash(what)
			case fCancelAfter:
				r.doCancel(what)
			case fFailAfter:
				err := fmt.Errorf("%s: %w", name, errStep)
				r.set(k, func(o *op) { o.effErr, o.fault = err, f2 })
				m.recordf(p.name, what, "fails after drawing: %v", err)
				return "", err
			case fPanicAfter:
				r.set(k, func(o *op) { o.panicked, o.fault = true, f2 })
				m.record(p.name, what, "panics after drawing")
				panic(stepPanic{i})
			}
			return payloadOf(r.taskID, i, name, shown), nil
		}}
	}
	return out
}

// ---- the model ----

type taskModel struct {
	id     string
	spec   [][]string
	lastN  int
	states []ckState
	proc   *mproc // the process that ran the task last, if it lives
	top    task.FencingToken
}

type ckModel struct {
	seq   *modelcheck.Seq
	h     *suites.History
	tg    *target
	kv    *modelKV
	store Store
	sink  *service
	rng   *rand.Rand
	seqMu sync.Mutex

	tasks  map[string]*taskModel
	stores map[string][]ckState
	procs  []*mproc
	// zombie is the run of a process paused mid-run, if any, and
	// zombieTask its task.
	zombie     *runRec
	zombieTask *taskModel
	runs       []*runRec
	calls      []*suites.Call
	nproc      int
}

func (m *ckModel) newProc(token task.FencingToken) *mproc {
	m.nproc++
	p := &mproc{m: m, name: fmt.Sprintf("process %d", m.nproc), token: token}
	opts := task.RunnerOptions{Store: runStore{p}, Sink: runSink{p}, Token: token,
		Now: func() time.Time {
			t := time.Now()
			if r := p.rec(); r != nil {
				r.mu.Lock()
				r.nowOut = append(r.nowOut, t)
				r.mu.Unlock()
			}
			return t
		},
		Rand: func() uint64 {
			m.seqMu.Lock()
			v := m.rng.Uint64()
			m.seqMu.Unlock()
			if r := p.rec(); r != nil {
				r.mu.Lock()
				r.randOut = append(r.randOut, v)
				r.mu.Unlock()
			}
			return v
		}}
	var err error
	p.runner = suites.Construct(func() Runner {
		var r Runner
		r, err = m.tg.buildRunner(opts)
		return r
	})
	if err != nil || p.runner == nil {
		m.fatalf("NewRunner(Options{Token: %d, ...}) = %v, want a runner (R3)", token, err)
	}
	m.recordf(p.name, "NewRunner", "a runner with token %d", token)
	m.procs = append(m.procs, p)
	return p
}

func (m *ckModel) task(t *rapid.T) *taskModel {
	id := rapid.SampledFrom(modelRunIDs).Draw(t, "task")
	tm := m.tasks[id]
	if tm == nil {
		tm = &taskModel{id: id, states: []ckState{{}}}
		for i := range modelMaxSteps {
			tm.spec = append(tm.spec, rapid.SampledFrom(modelDraws).Draw(t, fmt.Sprintf("draws of step %d", i)))
		}
		m.tasks[id] = tm
	}
	return tm
}

// stepRun runs one task in one process, with at most one fault.
func (m *ckModel) stepRun(t *rapid.T) {
	tm := m.task(t)
	if m.zombie != nil && rapid.Bool().Draw(t, "the paused process's task") {
		tm = m.zombieTask // a newer process takes the task over
	}
	// The process: a new one with the next token (a restart), the one
	// that ran the task last and lives (its own token again), or a new
	// one with a token lower than the task's (a process that got its
	// grant long ago).
	var p *mproc
	switch who := rapid.IntRange(0, 5).Draw(t, "process"); {
	case who == 0 && tm.proc != nil && !tm.proc.dead:
		p = tm.proc
	case who == 1 && tm.top > 1:
		p = m.newProc(tm.top - 1)
	default:
		p = m.newProc(tm.top + 1)
		tm.top++
	}
	if p.token > tm.top {
		tm.top = p.token
	}
	n := rapid.IntRange(tm.lastN, modelMaxSteps).Draw(t, "steps")
	empty := n > 0 && rapid.IntRange(0, 12).Draw(t, "empty task ID") == 0
	r := &runRec{p: p, taskID: tm.id, n: n, cur: -1, crashed: make(chan struct{}), never: make(chan struct{}),
		paused: make(chan struct{}), resume: make(chan struct{})}
	if empty {
		r.taskID = ""
	}
	kind := rapid.IntRange(0, 9).Draw(t, "fault kind")
	switch {
	case empty && kind == 3:
		r.point = "done"
	case n == 0 || empty || kind < 3: // no fault
	case kind == 3: // a context already done
		r.point = "done"
	default:
		var at string
		switch rapid.IntRange(0, 4).Draw(t, "point") {
		case 0:
			at = "load"
		case 1:
			at = "effect"
		case 2:
			at = "values"
		case 3:
			at = "apply"
		default:
			at = "commit"
		}
		faults := pointFaults[at]
		if at != "load" && at != "effect" && m.zombie == nil {
			faults = append(slices.Clone(faults), fPause, fPause, fPause)
		}
		r.f = rapid.SampledFrom(faults).Draw(t, "fault")
		r.point = at
		if at != "load" {
			r.point = fmt.Sprintf("%s/%d", at, rapid.IntRange(0, n-1).Draw(t, "fault step"))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if r.f == fDeadline {
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		r.deadline = true
	}
	r.ctx, r.cancel = ctx, cancel
	if r.point == "done" {
		cancel()
		r.cancelled = true
	}
	m.runs = append(m.runs, r)
	p.mu.Lock()
	p.cur = r
	p.mu.Unlock()

	plan := "no fault"
	switch {
	case r.point == "done":
		plan = "its context already cancelled"
	case r.f != fNone:
		plan = fmt.Sprintf("at %s, %s", r.point, r.f)
	}
	m.recordf(p.name, fmt.Sprintf("Run(%s, %d steps)", showID(r.taskID), n), "starts (%s)", plan)
	steps := m.steps(p, tm, n)
	var (
		err      error
		panicked any
	)
	call := suites.Construct(func() *suites.Call {
		return suites.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					panicked = v
				}
				r.mu.Lock()
				r.result, r.panicVal = err, panicked
				r.mu.Unlock()
			}()
			err = p.runner.Run(ctx, r.taskID, steps)
		})
	})
	m.calls = append(m.calls, call)
	r.call = call
	state := m.await(r, call)
	if !empty && n > 0 {
		tm.lastN = n // its commits may say so, whatever becomes of it
	}
	what := fmt.Sprintf("Run(%s, %d steps)", showID(r.taskID), n)
	switch state {
	case returned:
		if panicked != nil {
			m.recordf(p.name, what, "panics: %v", panicked)
		} else {
			m.record(p.name, what+" returns", outcome(err, "nil: every step done"))
		}
	case crashed:
		p.dead = true
	case paused:
		// A zombie in the making: its calls so far are checked now, the
		// rest when the test wakes it (stepWake).
		m.zombie, m.zombieTask = r, tm
		if tm.proc == p {
			tm.proc = nil // busy until woken: no run of its own meanwhile
		}
		m.checkRun(tm, r, true, false, nil)
		return
	case stuck:
		m.fatalf("%s %s: it neither returned nor crashed where the test made it crash; it waits for something that never comes (a lock left locked, a reply nobody sends) (R4, R9)", what, plan)
	}
	if _, ok := panicked.(stepPanic); ok {
		p.dead = true // its Run let the step's panic through: the process died there
	} else if panicked != nil {
		m.fatalf("%s panicked: %v, want an answer: only a step's panic may come out of Run (R9)", what, panicked)
	}
	if !p.dead {
		tm.proc = p
	}
	m.checkRun(tm, r, state == crashed, panicked != nil, err)
}

// await waits until the run returns or crashes, without waiting on the
// clock unless a step sleeps on it.
func (m *ckModel) await(r *runRec, call *suites.Call) state {
	if r.deadline {
		select {
		case <-call.Done():
			return returned
		case <-r.crashed:
			return crashed
		case <-r.paused:
			return paused
		case <-time.After(1000 * time.Hour):
			return stuck
		}
	}
	for range 200 {
		select {
		case <-call.Done():
			return returned
		case <-r.crashed:
			return crashed
		case <-r.paused:
			return paused
		default:
		}
		runtime.Gosched()
	}
	if settled(call) {
		return returned
	}
	select {
	case <-r.crashed:
		return crashed
	case <-r.paused:
		return paused
	default:
		return stuck
	}
}

// settled is call.Settle asked until it answers the same three times in a
// row: on a machine loaded enough, a call that is on its way can look
// parked for Settle's three looks (a goroutine the runtime has taken out of
// its bubble for a moment while it starts a collection), and a call stuck
// for good looks stuck every time.
func settled(call *suites.Call) bool {
	for range 3 {
		if call.Settle() {
			return true
		}
		runtime.Gosched()
	}
	return false
}

// checkRun compares what a run did with what the rules allow.
func (m *ckModel) checkRun(tm *taskModel, r *runRec, crashedRun, panickedRun bool, err error) {
	r.mu.Lock()
	ops := slices.Clone(r.ops)
	nowOut, randOut := slices.Clone(r.nowOut), slices.Clone(r.randOut)
	r.mu.Unlock()
	what := fmt.Sprintf("Run(%s, %d steps) by %s (token %d)", showID(r.taskID), r.n, r.p.name, r.p.token)
	ended := !crashedRun && !panickedRun

	// A context done before Run, an empty task ID, zero steps.
	if r.point == "done" {
		if len(ops) > 0 {
			m.fatalf("%s with a context already cancelled called the store, a step or the effect service, want nothing done (R11)", what)
		}
		if !errors.Is(err, context.Canceled) {
			m.fatalf("%s with a context already cancelled = %v, want an error wrapping %q (R11: the context comes first)", what, err, context.Canceled)
		}
		m.checkStopped(r, what)
		return
	}
	if r.taskID == "" {
		for _, o := range ops {
			if o.kind != opLoad {
				m.fatalf("%s with no task ID ran a step, committed or applied, want nothing done (R4)", what)
			}
		}
		if ended && !errors.Is(err, task.ErrNoTaskID) {
			m.fatalf("%s with no task ID = %v, want an error wrapping %q (R4)", what, err, task.ErrNoTaskID)
		}
		if ended {
			m.checkStopped(r, what)
		}
		return
	}
	if r.n == 0 {
		for _, o := range ops {
			if o.kind != opLoad {
				m.fatalf("%s with zero steps committed or applied something, want nothing run and nothing written (R4)", what)
			}
		}
		if ended && err != nil && !errors.Is(err, task.ErrStaleToken) {
			m.fatalf("%s with zero steps = %v, want nil (R4)", what, err)
		}
		for _, o := range ops {
			if o.err == nil && o.found {
				if len(match(tm.states, o.cp, o.found)) > 0 {
					tm.states = match(tm.states, o.cp, o.found)
				}
			}
		}
		if ended {
			m.checkStopped(r, what)
		}
		return
	}

	// The run proper. known is the checkpoint the runner knows is durable
	// (what it loaded, then what it committed); next the step it is on.
	var (
		loaded     bool
		resumed    int
		known      task.Checkpoint
		next       int
		completed  int
		effectDone = -1 // the step whose Effect returned a payload last
		gotLast    []task.RecordedValue
		appliedOK  = -1 // the step whose Apply returned nil, until its checkpoint is committed
		doneTried  = false
		failure    error // what must stop the run
		// valuesMayFollow: the run failed in a step or was cancelled,
		// and may still commit the values it drew (R7, R11).
		valuesMayFollow bool
		failedAt        string
		fresh           []task.RecordedValue // values drawn in this run, in order
	)
	stop := func(o string, e error) {
		if failure == nil {
			failure, failedAt = e, o
		}
	}
	for _, o := range ops {
		if failure != nil && !(o.kind == opCommit && o.cp.Next == next && valuesMayFollow) {
			m.fatalf("%s went on after %s (%v): it %s, want Run to stop there (R8, R9)", what, failedAt, failure, describeOp(o))
		}
		if o.cancelled && (o.kind == opEffect || o.kind == opApply) {
			m.fatalf("%s %s after its context was cancelled, want nothing more run or applied: Run checks its context before each step and before each effect (R11)", what, describeOp(o))
		}
		if o.fault == fCrashBefore || o.fault == fPause {
			continue // the process died before the call
		}
		switch o.kind {
		case opLoad:
			again := loaded
			loaded = true
			if o.err != nil {
				if o.fault == fKVGet && !errors.Is(o.err, errStorage) {
					m.fatalf("Load(%s) while the KV's Get fails = %v, want an error wrapping the KV's %q (R2)", showID(r.taskID), o.err, errStorage)
				}
				stop("its Load failed", o.err)
				continue
			}
			if o.fault == fKVGet {
				m.fatalf("Load(%s) while the KV's Get fails = %s (found %v), <nil>, want an error wrapping the KV's %q: a failed read is not an answer (R2, R9)", showID(r.taskID), showCheckpoint(o.cp), o.found, errStorage)
			}
			ms := match(tm.states, o.cp, o.found)
			if len(ms) == 0 {
				got := "no checkpoint"
				if o.found {
					got = showCheckpoint(o.cp)
				}
				m.fatalf("Load(%s) = %s, want the last checkpoint committed, exactly: %s (R1)", showID(r.taskID), got, showStates(tm.states))
			}
			tm.states = ms
			if again {
				// Loading again mid-run is no rule's business; what it
				// loads is (R1), and a higher token stops the run (R8).
				if o.found && o.cp.Token > r.p.token {
					stop("it loaded a checkpoint with a higher token", fmt.Errorf("the checkpoint has token %d: %w", o.cp.Token, task.ErrStaleToken))
				}
				continue
			}
			if o.found {
				known, next = deepCopy(o.cp), o.cp.Next
				if o.cp.Token > r.p.token {
					stop("it loaded a checkpoint with a higher token", fmt.Errorf("the checkpoint has token %d: %w", o.cp.Token, task.ErrStaleToken))
				}
			}
			resumed, completed = next, next
		case opEffect:
			if !loaded {
				m.fatalf("%s ran step %d before loading the task's checkpoint, want Load first: the run starts at its Next (R4)", what, o.step)
			}
			if appliedOK >= 0 {
				m.fatalf("%s ran step %d while the checkpoint of step %d, whose effect was applied, was not committed, want the commit of Next %d first (R6)", what, o.step, appliedOK, appliedOK+1)
			}
			if o.step != next {
				if o.step < next {
					m.fatalf("%s ran step %d, want step %d: the checkpoint it loaded or committed says steps before %d are done, and a done step never runs again (R4)", what, o.step, next, next)
				}
				m.fatalf("%s ran step %d, want step %d: every step once, in order, from the checkpoint's Next (R4)", what, o.step, next)
			}
			rec := valuesOfStep(known.Values, o.step)
			k := min(len(rec), len(o.got))
			if !sameValues(o.got[:k], rec[:k]) {
				m.fatalf("step %d of %s got %s from its Recorder, want the values recorded for it, %s, in order (R7)", o.step, showID(r.taskID), showVals(o.got), showVals(rec))
			}
			if len(o.got) < len(rec) && o.effErr == nil && !o.panicked && o.fault == fNone {
				m.fatalf("step %d of %s got %s, want its recorded values %s (R7)", o.step, showID(r.taskID), showVals(o.got), showVals(rec))
			}
			for _, v := range o.got[k:] {
				ok := false
				switch v.Kind {
				case task.RecordedTime:
					ok = slices.ContainsFunc(nowOut, v.Time.Equal)
				case task.RecordedRand:
					ok = slices.Contains(randOut, v.Rand)
				}
				if !ok {
					m.fatalf("step %d of %s got %s, which is neither a value recorded for it (%s) nor one the runner's Now or Rand gave: each new value is drawn from the runner's clock and source (R7)", o.step, showID(r.taskID), v, showVals(rec))
				}
				fresh = append(fresh, v)
			}
			switch {
			case o.panicked && ended:
				if err == nil {
					m.fatalf("%s returned nil after step %d panicked, want an error: the step did not run (R9)", what, o.step)
				}
				stop(fmt.Sprintf("step %d panicked", o.step), err)
				valuesMayFollow = true
			case o.panicked:
			case o.effErr != nil:
				stop(fmt.Sprintf("step %d failed", o.step), o.effErr)
				valuesMayFollow = true
			default:
				effectDone, gotLast = o.step, o.got
			}
		case opCommit:
			cp := o.cp
			switch {
			case cp.TaskID != r.taskID:
				m.fatalf("%s committed a checkpoint of task %s, want %s (R1, R4)", what, showID(cp.TaskID), showID(r.taskID))
			case cp.Token != r.p.token:
				m.fatalf("%s committed %s, want token %d, the runner's (R8)", what, showCheckpoint(cp), r.p.token)
			case cp.Total != r.n:
				m.fatalf("%s committed %s, want Total %d, the number of steps of this Run (R4)", what, showCheckpoint(cp), r.n)
			case !loaded:
				m.fatalf("%s committed %s before loading the task's checkpoint (R4)", what, showCheckpoint(cp))
			}
			switch {
			case cp.Next == next:
			case cp.Next == next+1 && appliedOK == next:
				doneTried = true
			case cp.Next == next+1:
				m.fatalf("%s committed %s before Apply of step %d returned nil: a checkpoint marks a step done only once its effect is durable (R6)", what, showCheckpoint(cp), next)
			default:
				m.fatalf("%s committed %s while on step %d, want Next %d (values of the step) or %d (the step done) (R4, R6)", what, showCheckpoint(cp), next, next, next+1)
			}
			// Values: the loaded ones, then those drawn in this run, in
			// order, each once; those of the step marked done all there.
			base := loadedValues(ops)
			want := append(slices.Clone(base), fresh...)
			if len(cp.Values) > len(want) || !sameValues(cp.Values, want[:len(cp.Values)]) || len(cp.Values) < len(base) {
				m.fatalf("%s committed %s, want the values %s: those of the checkpoint it loaded, then those its steps drew, each once, in the order drawn (R7)", what, showCheckpoint(cp), showVals(want))
			}
			if cp.Next == next+1 {
				for _, v := range gotLast {
					if !slices.ContainsFunc(cp.Values, func(w task.RecordedValue) bool { return sameValue(v, w) }) {
						m.fatalf("%s committed %s, which lacks %s, a value step %d drew: the checkpoint keeps every value drawn (R7)", what, showCheckpoint(cp), v, next)
					}
				}
			}
			switch {
			case o.err == nil:
				tm.states = []ckState{{found: true, cp: deepCopy(cp)}}
				known = deepCopy(cp)
				if cp.Next == next+1 {
					next++
					completed = next
					appliedOK = -1
				}
			case o.fault == fCrashBefore:
			default:
				if o.fault == fKVPutAfter {
					tm.states = addState(tm.states, ckState{found: true, cp: deepCopy(cp)})
				}
				if (o.fault == fKVGet || o.fault == fKVPutBefore || o.fault == fKVPutAfter) && !errors.Is(o.err, errStorage) {
					m.fatalf("Commit(%s) while %s = %v, want an error wrapping the KV's %q (R2)", showCheckpoint(cp), o.fault, o.err, errStorage)
				}
				stale := false
				for _, st := range tm.states {
					stale = stale || (st.found && st.cp.Token > cp.Token)
				}
				if o.fault == fNone && !o.cancelled && !r.isCancelled() && !(stale && errors.Is(o.err, task.ErrStaleToken)) {
					m.fatalf("Commit(%s) = %v, want nil: its token is at least the task's, and nothing failed (R1)", showCheckpoint(cp), o.err)
				}
				if cp.Next == next+1 && (errors.Is(o.err, context.Canceled) || errors.Is(o.err, context.DeadlineExceeded)) {
					m.fatalf("%s: the commit of step %d, whose effect was applied, = %v, want it committed even though the context is done: an effect applied is checkpointed (R11)", what, next, o.err)
				}
				stop("its Commit failed", o.err)
			}
			if o.fault == fCrashAfter && o.err == nil {
				tm.states = []ckState{{found: true, cp: deepCopy(cp)}}
			}
		case opApply:
			wantKey := stepKey(r.taskID, next)
			switch {
			case effectDone != next:
				m.fatalf("%s applied %s, want no Apply before step %d's Effect returned its payload (R4, R6)", what, showID(o.key), next)
			case o.key != wantKey:
				m.fatalf("%s applied step %d under the key %s, want %s: task ID, \"/\", step index (R5)", what, next, showID(o.key), showID(wantKey))
			case o.payload != payloadOf(r.taskID, next, stepNames[next%len(stepNames)], render(gotLast)):
				m.fatalf("%s applied step %d with payload %q, want the payload its Effect returned, %q (R6)", what, next, clip(o.payload), clip(payloadOf(r.taskID, next, stepNames[next%len(stepNames)], render(gotLast))))
			}
			if len(gotLast) > 0 && !sameValues(valuesOfStep(known.Values, next), gotLast) {
				m.fatalf("%s applied step %d, which drew %s, while the checkpoint it last committed holds %s for it: values are committed before the effect they shape is applied (R7)", what, next, showVals(gotLast), showVals(valuesOfStep(known.Values, next)))
			}
			if known.Next > next {
				m.fatalf("%s applied step %d while its checkpoint says %s (R6)", what, next, showCheckpoint(known))
			}
			if errors.Is(o.err, task.ErrEffectMismatch) && o.fault == fNone {
				m.fatalf("%s: the effect service refused step %d: %v; a step run again must send the payload of its first run, from its recorded values (R7)", what, next, o.err)
			}
			switch {
			case o.err == nil:
				appliedOK = next
			case o.fault == fCrashAfter:
			default:
				stop("its Apply failed", o.err)
			}
		}
	}
	if !ended {
		return
	}
	cancelledRun := r.isCancelled()
	switch {
	case appliedOK >= 0 && !doneTried:
		m.fatalf("%s returned %v after Apply of step %d returned nil, without committing the step: an effect applied is checkpointed, even when the context is done (R6, R11)", what, err, appliedOK)
	case panickedRun:
	case failure != nil:
		if err == nil {
			m.fatalf("%s = nil after %s (%v), want that error, wrapped (R8, R9)", what, failedAt, failure)
		}
		var cause error
		switch {
		case errors.Is(failure, task.ErrStaleToken):
			cause = task.ErrStaleToken
		case errors.Is(failure, errStorage):
			cause = errStorage
		case errors.Is(failure, errService):
			cause = errService
		case errors.Is(failure, errStep):
			cause = errStep
		case errors.Is(failure, context.DeadlineExceeded):
			cause = context.DeadlineExceeded
		case errors.Is(failure, context.Canceled):
			cause = context.Canceled
		}
		if cause != nil && !errors.Is(err, cause) {
			m.fatalf("%s = %v after %s (%v), want an error wrapping %q (R8, R9, R11)", what, err, failedAt, failure, cause)
		}
	case cancelledRun:
		ctxErr := context.Canceled
		if r.deadline {
			ctxErr = context.DeadlineExceeded
		}
		if next < r.n && !errors.Is(err, ctxErr) {
			m.fatalf("%s = %v, its context done at step %d of %d, want an error wrapping %q (R11)", what, err, next, r.n, ctxErr)
		}
		if next == r.n && err != nil && !errors.Is(err, ctxErr) {
			m.fatalf("%s = %v, every step done, want nil or an error wrapping %q (R11)", what, err, ctxErr)
		}
	default:
		if err != nil {
			m.fatalf("%s = %v, want nil: nothing failed (R4)", what, err)
		}
		if next != r.n {
			m.fatalf("%s = nil with the task at step %d of %d, want every step run (R4)", what, next, r.n)
		}
	}
	if panickedRun {
		return
	}
	m.checkStopped(r, what)
	if loaded && !strings.HasPrefix(failedAt, "its Load") && !strings.HasPrefix(failedAt, "it loaded") {
		got := r.p.runner.Progress()
		want := task.RunProgress{TaskID: r.taskID, Total: r.n, Completed: completed, ResumedFrom: resumed}
		if got != want {
			m.fatalf("after %s returned, Progress() = %s, want %s (R10)", what, showProgress(got), showProgress(want))
		}
	}
}

func (m *ckModel) checkStopped(r *runRec, what string) {
	if got := r.p.runner.Progress(); got.Running {
		m.fatalf("after %s returned, Progress() = %s, want Running false (R10)", what, showProgress(got))
	}
}

func showProgress(p task.RunProgress) string {
	id := p.TaskID
	p.TaskID = showID(id)
	return p.String()
}

func render(vals []task.RecordedValue) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if v.Kind == task.RecordedTime {
			out[i] = v.Time.UTC().Format(time.RFC3339Nano)
		} else {
			out[i] = fmt.Sprint(v.Rand)
		}
	}
	return out
}

func loadedValues(ops []op) []task.RecordedValue {
	for _, o := range ops {
		if o.kind == opLoad && o.err == nil && o.found {
			return o.cp.Values
		}
	}
	return nil
}

func describeOp(o op) string {
	switch o.kind {
	case opLoad:
		return "loaded the checkpoint"
	case opEffect:
		return fmt.Sprintf("ran step %d", o.step)
	case opCommit:
		return "committed " + showCheckpoint(o.cp)
	default:
		return "applied " + showID(o.key)
	}
}

// ---- the caller working the store directly ----

func (m *ckModel) storeStates(id string) []ckState {
	if s, ok := m.stores[id]; ok {
		return s
	}
	return []ckState{{}}
}

// call runs f in a goroutine of its own and fails the step if it does not
// return at once.
func (m *ckModel) call(what string, f func()) {
	c := suites.Go(f)
	m.calls = append(m.calls, c)
	for i := 0; i < 100 && !c.Returned(); i++ {
		runtime.Gosched()
	}
	if !settled(c) {
		m.record("caller", what, "still waiting")
		m.fatalf("%s did not return: it waits for something (a lock left locked by an earlier call), want an answer at once (R1, R2)", what)
	}
}

// storeFault is what the KV or the context does to one direct call.
type storeFault int

const (
	sfNone storeFault = iota
	sfCancelled
	sfGet
	sfPutBefore
	sfPutAfter
)

func (f storeFault) String() string {
	return [...]string{"", " with a cancelled context", " while the KV's Get fails", " while the KV's Put fails before writing", " while the KV's Put writes, then fails"}[f]
}

func (m *ckModel) stepStoreCommit(t *rapid.T) {
	id := rapid.SampledFrom(modelStoreIDs).Draw(t, "store task")
	before := m.storeStates(id)
	tokens := []task.FencingToken{0, 1, 2, math.MaxUint64}
	for _, s := range before {
		if s.found {
			tokens = append(tokens, s.cp.Token-1, s.cp.Token, s.cp.Token+1)
		}
	}
	token := rapid.SampledFrom(tokens).Draw(t, "token")
	var vals []task.RecordedValue
	for i := range rapid.IntRange(0, 3).Draw(t, "values") {
		v := task.RecordedValue{Step: rapid.IntRange(0, 3).Draw(t, "value step")}
		if rapid.Bool().Draw(t, "time") {
			v.Kind, v.Time = task.RecordedTime, time.Now().Add(time.Duration(i)*time.Millisecond)
		} else {
			v.Kind, v.Rand = task.RecordedRand, rapid.Uint64().Draw(t, "rand")
		}
		vals = append(vals, v)
	}
	cp := task.Checkpoint{TaskID: id, Token: token, Next: rapid.IntRange(0, 4).Draw(t, "next"), Total: 4, Values: vals}
	f := sfNone
	if rapid.IntRange(0, 2).Draw(t, "fault?") == 0 {
		f = storeFault(rapid.IntRange(1, 4).Draw(t, "store fault"))
	}
	ctx := context.Background()
	switch f {
	case sfCancelled:
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	case sfGet:
		m.kv.arm("get", false)
	case sfPutBefore:
		m.kv.arm("put", false)
	case sfPutAfter:
		m.kv.arm("put", true)
	}
	saved := deepCopy(cp)
	what := "Commit(" + showCheckpoint(cp) + ")"
	var err error
	m.call(what, func() { err = m.store.Commit(ctx, cp) })
	m.kv.disarm()
	m.record("caller", what+f.String(), outcome(err, "committed"))
	if len(vals) > 0 && rapid.Bool().Draw(t, "change values") {
		vals[0].Step += 100
		vals[0].Rand ^= 0xdead
		vals[0].Time = vals[0].Time.Add(time.Hour)
		m.record("caller", "changes Values[0] of the checkpoint it committed", "in its own slice")
	}
	written := ckState{found: true, cp: saved}
	var accepting, refusing []ckState
	for _, s := range before {
		if token != 0 && (!s.found || token >= s.cp.Token) {
			accepting = append(accepting, s)
		} else {
			refusing = append(refusing, s)
		}
	}
	if id == "" && errors.Is(err, task.ErrNoTaskID) {
		return // a store may refuse an empty task ID (R1)
	}
	state := showStates(before)
	switch f {
	case sfCancelled:
		if !errors.Is(err, context.Canceled) && !(token == 0 && errors.Is(err, task.ErrStaleToken)) {
			m.fatalf("%s with a cancelled context = %v, want an error wrapping %q and nothing written (R2)", what, err, context.Canceled)
		}
	case sfGet:
		if !errors.Is(err, errStorage) && !(len(refusing) > 0 && errors.Is(err, task.ErrStaleToken)) {
			m.fatalf("%s while the KV's Get fails = %v, want an error wrapping the KV's %q: without the task's token there is no check, and nothing is written (R2)", what, err, errStorage)
		}
	case sfNone, sfPutBefore, sfPutAfter:
		switch {
		case err == nil && f != sfNone:
			m.fatalf("%s%s = nil, want an error wrapping the KV's %q (R2)", what, f, errStorage)
		case err == nil && len(accepting) > 0:
			m.stores[id] = []ckState{written}
		case err == nil:
			m.fatalf("%s = nil, want an error wrapping %q: the task holds %s, and a lower token, or 0, is refused (R1)", what, task.ErrStaleToken, state)
		case errors.Is(err, task.ErrStaleToken) && len(refusing) > 0:
			m.stores[id] = refusing
		case len(accepting) == 0:
			m.fatalf("%s%s = %v, want an error wrapping %q: the task holds %s (R1)", what, f, err, task.ErrStaleToken, state)
		case f == sfNone:
			m.fatalf("%s = %v, want nil: the task holds %s, and a token at least its own, not 0, is accepted (R1)", what, err, state)
		case !errors.Is(err, errStorage):
			m.fatalf("%s%s = %v, want an error wrapping the KV's %q (R2)", what, f, err, errStorage)
		case f == sfPutAfter:
			m.stores[id] = accepting
			m.stores[id] = addState(m.stores[id], written)
		default:
			m.stores[id] = accepting
		}
	}
}

func (m *ckModel) stepStoreLoad(t *rapid.T) {
	id := rapid.SampledFrom(modelStoreIDs).Draw(t, "store task")
	if rapid.IntRange(0, 2).Draw(t, "a run's task") == 0 && len(m.tasks) > 0 {
		ids := make([]string, 0, len(m.tasks))
		for k := range m.tasks {
			ids = append(ids, k)
		}
		slices.Sort(ids)
		id = rapid.SampledFrom(ids).Draw(t, "run task")
	}
	f := sfNone
	switch rapid.IntRange(0, 5).Draw(t, "load fault") {
	case 0:
		f = sfGet
	case 1:
		f = sfCancelled
	}
	ctx := context.Background()
	switch f {
	case sfCancelled:
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	case sfGet:
		m.kv.arm("get", false)
	}
	what := "Load(" + showID(id) + ")"
	var (
		cp    task.Checkpoint
		found bool
		err   error
	)
	m.call(what, func() { cp, found, err = m.store.Load(ctx, id) })
	m.kv.disarm()
	got := "no checkpoint"
	if found {
		got = showCheckpoint(cp)
	}
	m.record("caller", what+f.String(), outcome(err, got))
	if id == "" && errors.Is(err, task.ErrNoTaskID) {
		return
	}
	switch f {
	case sfGet:
		if !errors.Is(err, errStorage) {
			m.fatalf("%s while the KV's Get fails = %s, %v, want an error wrapping the KV's %q, never \"no checkpoint\" (R2)", what, got, err, errStorage)
		}
		return
	case sfCancelled:
		if !errors.Is(err, context.Canceled) {
			m.fatalf("%s with a cancelled context = %s, %v, want an error wrapping %q (R2)", what, got, err, context.Canceled)
		}
		return
	}
	var states []ckState
	if tm := m.tasks[id]; tm != nil {
		states = tm.states
	} else {
		states = m.storeStates(id)
	}
	ms := match(states, cp, found)
	if err != nil || len(ms) == 0 {
		m.fatalf("%s = %s, %v, want the last checkpoint committed, exactly: %s (R1)", what, got, err, showStates(states))
	}
	if tm := m.tasks[id]; tm != nil {
		tm.states = ms
	} else {
		m.stores[id] = ms
	}
	if len(cp.Values) > 0 {
		cp.Values[0].Step += 100
		cp.Values[0].Rand ^= 0xbeef
		m.record("caller", "changes Values[0] of the checkpoint Load gave it", "in the slice it got")
	}
}

// stepAdvance moves the clock on, so that a process that restarts does so
// an hour, a day or a week later.
func (m *ckModel) stepAdvance(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}).Draw(t, "advance")
	fakeclock.Advance(d)
	m.h.Note("%v later (t=%s)", d, fakeclock.Elapsed())
}

func (m *ckModel) cleanup() {
	m.kv.disarm()
	for _, r := range m.runs {
		close(r.never)
		r.cancel() // a runner that watches its context lets go of it
	}
	if r := m.zombie; r != nil {
		r.mu.Lock()
		r.ending = true
		r.mu.Unlock()
		close(r.resume)
	}
	for _, c := range m.calls {
		select {
		case <-c.Done():
		case <-time.After(time.Second): // virtual: a runner whose actor died
		}
	}
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 60, Steps: 25}, func(seq *modelcheck.Seq, tg *target) {
		kv := &modelKV{data: map[string]task.Checkpoint{}}
		m := &ckModel{seq: seq, h: seq.H, tg: tg, kv: kv, sink: newService(),
			rng:   rand.New(rand.NewPCG(rapid.Uint64().Draw(seq.T, "source"), 8)),
			tasks: map[string]*taskModel{}, stores: map[string][]ckState{}}
		m.store = suites.Construct(func() Store { return tg.buildStore(kv) })
		defer m.cleanup()
		seq.Repeat(map[string]func(*rapid.T){
			"run":     m.stepRun,
			"restart": m.stepRun,
			"commit":  m.stepStoreCommit,
			"load":    m.stepStoreLoad,
			"advance": m.stepAdvance,
			"wake":    m.stepWake,
		})
	})
}

// shorten cuts the middle out of a text longer than n bytes (an error that
// quotes a task ID of 3,000 bytes), keeping it valid UTF-8.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*3/5, n*2/5
	return strings.ToValidUTF8(s[:head], "") + fmt.Sprintf(" …(%d bytes cut)… ", len(s)-head-tail) + strings.ToValidUTF8(s[len(s)-tail:], "")
}

func (m *ckModel) record(actor, action, out string) {
	m.h.Record(actor, shorten(action, 200), shorten(out, 300))
}

func (m *ckModel) recordf(actor, action, format string, args ...any) {
	m.record(actor, action, fmt.Sprintf(format, args...))
}

// fatalf fails the sequence (see modelcheck.Seq.Fatalf), its message cut
// to a readable length.
func (m *ckModel) fatalf(format string, args ...any) {
	m.seq.Helper()
	m.seq.Fatalf("%s", shorten(fmt.Sprintf(format, args...), 900))
}

// stepWake wakes the paused process once a newer process has committed its
// task: the zombie's next commit must be refused, and it must stop there
// with ErrStaleToken, applying nothing more (R1, R8).
func (m *ckModel) stepWake(t *rapid.T) {
	r, tm := m.zombie, m.zombieTask
	if r == nil {
		t.SkipNow()
	}
	for _, st := range tm.states {
		if !st.found || st.cp.Token <= r.p.token {
			t.SkipNow() // no newer process has committed the task yet
		}
	}
	m.zombie, m.zombieTask = nil, nil
	r.mu.Lock()
	from := r.pausedAt
	r.mu.Unlock()
	close(r.resume)
	what := fmt.Sprintf("Run(%s, %d steps) by %s (token %d), woken after the task's checkpoint got token %d", showID(r.taskID), r.n, r.p.name, r.p.token, tm.states[0].cp.Token)
	done := false
	for range 200 {
		if r.call.Returned() {
			done = true
			break
		}
		runtime.Gosched()
	}
	if !done && !settled(r.call) {
		m.fatalf("%s: it neither returned nor stopped; it waits for something that never comes (R8)", what)
	}
	r.mu.Lock()
	ops := slices.Clone(r.ops[from:])
	r.mu.Unlock()
	refused := false
	for k, o := range ops {
		if refused {
			m.fatalf("%s %s after its commit was refused with ErrStaleToken, want it to stop at once (R8)", what, describeOp(o))
		}
		switch o.kind {
		case opEffect:
			m.fatalf("%s ran step %d before committing what it had done: a runner commits the values or the step it paused before (R6, R7)", what, o.step)
		case opApply:
			if k != 0 {
				m.fatalf("%s applied %s after waking, want only the effect it paused before, then its commit (R8)", what, showID(o.key))
			}
			if errors.Is(o.err, task.ErrEffectMismatch) {
				m.fatalf("%s: the effect service refused %s: %v; the newer runner replayed the values this one committed, so both send one payload (R7)", what, showID(o.key), o.err)
			}
			if o.err != nil {
				refused = true // a failed Apply stops the run too (R6)
			}
		case opCommit:
			if o.err == nil {
				m.fatalf("Commit(%s) by %s = nil, want an error wrapping %q: the task holds %s, and a lower token is refused (R1)", showCheckpoint(o.cp), r.p.name, task.ErrStaleToken, showStates(tm.states))
			}
			if !errors.Is(o.err, task.ErrStaleToken) {
				m.fatalf("Commit(%s) by %s = %v, want an error wrapping %q: the task holds %s (R1)", showCheckpoint(o.cp), r.p.name, o.err, task.ErrStaleToken, showStates(tm.states))
			}
			refused = true
		case opLoad:
			refused = true // what it loads has a higher token: it stops (R8)
		}
	}
	r.mu.Lock()
	err, pv := r.result, r.panicVal
	r.mu.Unlock()
	if pv != nil {
		m.fatalf("%s panicked: %v, want an answer (R8)", what, pv)
	}
	m.record(r.p.name, fmt.Sprintf("Run(%s) returns", showID(r.taskID)), outcome(err, "nil: every step done"))
	if !refused {
		m.fatalf("%s = %v without a refused commit after waking, want it to commit and be refused (R6, R8)", what, err)
	}
	if len(ops) > 0 && ops[0].kind == opApply && ops[0].err == nil && !slices.ContainsFunc(ops, func(o op) bool { return o.kind == opCommit }) {
		m.fatalf("%s applied %s and returned without committing it (R6)", what, showID(ops[0].key))
	}
	if !errors.Is(err, task.ErrStaleToken) && !(ops[0].kind == opApply && ops[0].err != nil) {
		m.fatalf("%s = %v, want an error wrapping %q: a refused commit means another runner holds the task (R8)", what, err, task.ErrStaleToken)
	}
	m.checkStopped(r, what)
}
