package checkpointsuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// The failures the suite's dependencies report.
var (
	errStorage = errors.New("checkpoint storage: connection reset")
	errService = errors.New("effect service: 503 Service Unavailable")
	errStep    = errors.New("step failed: the venue API refused the dates")
)

// target is what every case is handed: ways to build the student's store
// and runners, and the case's test and history.
type target struct {
	t           *testing.T
	h           *suites.History
	buildStore  func(task.CheckpointKV) Store
	buildRunner func(task.RunnerOptions) (Runner, error)
}

// world is one deployment: the durable KV, the student's store over it
// (the database every process talks to), the effect service, the clock and
// the seeded random source the processes' runners draw from.
type world struct {
	e     *target
	t     *testing.T
	h     *suites.History
	kv    *durableKV
	store Store
	sink  *service

	mu   sync.Mutex
	rng  *rand.Rand
	runs []stepRun // every call of a step's Effect, in order
}

// stepRun is one call of one step's Effect by one process.
type stepRun struct {
	proc   string
	taskID string
	step   int
	values []string // what the step got from its Recorder, rendered
}

func (e *target) newWorld() *world {
	w := &world{e: e, t: e.t, h: e.h, kv: newDurableKV(), sink: newService(), rng: rand.New(rand.NewPCG(uint64(suites.Seed(e.t)), 8))}
	w.store = suites.Construct(func() Store { return e.buildStore(w.kv) })
	return w
}

// draw is the random source the suite gives every runner.
func (w *world) draw() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Uint64()
}

func (w *world) logRun(r stepRun) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs = append(w.runs, r)
}

// runsOf returns the Effect calls of step of taskID, in order.
func (w *world) runsOf(taskID string, step int) []stepRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []stepRun
	for _, r := range w.runs {
		if r.taskID == taskID && r.step == step {
			out = append(out, r)
		}
	}
	return out
}

// runsBy returns the steps of taskID that proc ran, in order.
func (w *world) runsBy(proc, taskID string) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for _, r := range w.runs {
		if r.proc == proc && r.taskID == taskID {
			out = append(out, r.step)
		}
	}
	return out
}

// advance moves virtual time on by d and says so in the timeline.
func (w *world) advance(d time.Duration, why string) {
	fakeclock.Advance(d)
	w.h.Note("%v later (t=%s): %s", d, fakeclock.Elapsed(), why)
}

// ---- the durable KV under the student's store ----

// durableKV is the plain durable storage: a map of checkpoints, deep-copied
// in and out (times lose their monotonic reading, as they would on disk),
// with every accepted Put kept in order, and failures a case injects.
type durableKV struct {
	mu     sync.Mutex
	data   map[string]task.Checkpoint
	puts   []task.Checkpoint
	faults []kvFault
	calls  map[string]int // "get", "put" -> calls so far

	// hold, when set, holds the next Get still after it has read, until
	// release is closed; held is closed when it is held.
	hold    bool
	held    chan struct{}
	release chan struct{}

	// aliasing, when set, makes the KV keep the checkpoint Put gave it as
	// it is, Values slice and all, and Get hand that slice out: an
	// in-memory KV may, and the README asks the store, not the KV, to keep
	// its own copy.
	aliasing bool
}

// kvFault fails the n-th call (from 1) of op; after means the call takes
// effect first (a Put that is stored, then the answer is lost).
type kvFault struct {
	op    string
	n     int
	after bool
}

func newDurableKV() *durableKV {
	return &durableKV{data: map[string]task.Checkpoint{}, calls: map[string]int{}}
}

func copyCheckpoint(cp task.Checkpoint) task.Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	for i := range cp.Values {
		cp.Values[i].Time = cp.Values[i].Time.Round(0)
	}
	return cp
}

// failCall makes the n-th call of op (counted from now) fail.
func (kv *durableKV) failCall(op string, n int, after bool) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.faults = append(kv.faults, kvFault{op: op, n: kv.calls[op] + n, after: after})
}

func (kv *durableKV) fault(op string) (fail, after bool) {
	kv.calls[op]++
	for _, f := range kv.faults {
		if f.op == op && f.n == kv.calls[op] {
			return true, f.after
		}
	}
	return false, false
}

func (kv *durableKV) Get(ctx context.Context, taskID string) (task.Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return task.Checkpoint{}, false, err
	}
	kv.mu.Lock()
	fail, _ := kv.fault("get")
	cp, ok := kv.data[taskID]
	if !kv.aliasing {
		cp = copyCheckpoint(cp)
	}
	hold, held, release := kv.hold, kv.held, kv.release
	kv.hold = false
	kv.mu.Unlock()
	if fail {
		return task.Checkpoint{}, false, fmt.Errorf("get %q: %w", taskID, errStorage)
	}
	if hold {
		close(held)
		<-release
	}
	return cp, ok, nil
}

func (kv *durableKV) Put(ctx context.Context, cp task.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	fail, after := kv.fault("put")
	if fail && !after {
		return fmt.Errorf("put %q: %w", cp.TaskID, errStorage)
	}
	if kv.aliasing {
		kv.data[cp.TaskID] = cp
	} else {
		kv.data[cp.TaskID] = copyCheckpoint(cp)
	}
	kv.puts = append(kv.puts, copyCheckpoint(cp))
	if fail {
		return fmt.Errorf("put %q: %w (the write may have landed)", cp.TaskID, errStorage)
	}
	return nil
}

// holdNextGet makes the next Get hold still after reading, and returns a
// channel closed once it is held and a function that lets it go on.
func (kv *durableKV) holdNextGet() (held <-chan struct{}, release func()) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.hold, kv.held, kv.release = true, make(chan struct{}), make(chan struct{})
	rel := kv.release
	var once sync.Once
	return kv.held, func() { once.Do(func() { close(rel) }) }
}

// peek returns what the KV holds for taskID, without counting a call.
func (kv *durableKV) peek(taskID string) (task.Checkpoint, bool) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	cp, ok := kv.data[taskID]
	return copyCheckpoint(cp), ok
}

// putsOf returns every checkpoint of taskID the KV stored, in order.
func (kv *durableKV) putsOf(taskID string) []task.Checkpoint {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	var out []task.Checkpoint
	for _, cp := range kv.puts {
		if cp.TaskID == taskID {
			out = append(out, copyCheckpoint(cp))
		}
	}
	return out
}

func (kv *durableKV) putCount() int {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return len(kv.puts)
}

// ---- the effect service ----

// service is the effect service: idempotent by key. It keeps the payload
// each key was first applied with, and counts every request.
type service struct {
	mu       sync.Mutex
	applied  map[string]string
	order    []string // keys in the order their effect was performed
	requests map[string]int
}

func newService() *service {
	return &service{applied: map[string]string{}, requests: map[string]int{}}
}

// apply performs payload under key, as the real service would.
func (s *service) apply(key, payload string) (performed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[key]++
	if p, ok := s.applied[key]; ok {
		if p != payload {
			return false, fmt.Errorf("key %q: first applied with %q, now %q: %w", key, p, payload, task.ErrEffectMismatch)
		}
		return false, nil
	}
	s.applied[key] = payload
	s.order = append(s.order, key)
	return true, nil
}

// seed records payload as applied under key before the case starts, as a
// run of long ago (or another program) would have: a later Apply of key with
// another payload is refused with ErrEffectMismatch.
func (s *service) seed(key, payload string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied[key] = payload
}

// Apply is the service as a runner calls it directly.
func (s *service) Apply(ctx context.Context, key, payload string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.apply(key, payload)
	return err
}

func (s *service) snapshot() (order []string, applied map[string]string, requests map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order), maps(s.applied), mapsInt(s.requests)
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapsInt(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- processes ----

// action is what a process does at a point of its run.
type action int

const (
	proceed      action = iota
	failBefore          // the call fails without taking effect
	failAfter           // the call takes effect, then fails (the answer is lost)
	crashBefore         // the process dies before the call
	crashAfter          // the process dies after the call took effect
	pauseBefore         // the process stops before the call until resumed
	pauseAfter          // the process stops after the call until resumed
	cancelBefore        // the process's context is cancelled before the call
	cancelAfter         // the process's context is cancelled after the call
)

func (a action) String() string {
	return [...]string{"proceed", "fails before", "fails after", "crashes before", "crashes after", "pauses before", "pauses after", "is cancelled before", "is cancelled after"}[a]
}

// proc is one worker process: a runner of the student's with the suite's
// views of the store and the effect service, which apply the process's
// plan (a crash, a failure, a pause, a cancellation at named points:
// "load", "effect/1", "values/1", "apply/1", "commit/1").
type proc struct {
	w      *world
	name   string
	token  task.FencingToken
	runner Runner
	plan   map[string]action
	ctx    context.Context
	cancel context.CancelFunc
	call   *suites.Call

	mu      sync.Mutex
	err     error
	next    int // the checkpoint's Next as this process knows it
	cur     int // the step whose effect it computed last
	applies []applyView
	loads   int
	commits int
	effects int

	crashed  chan struct{}
	paused   chan struct{}
	resume   chan struct{}
	pausedAt string
	never    chan struct{}
	onceC    sync.Once
	onceP    sync.Once
	onceW    sync.Once
	ending   atomic.Bool
}

// applyView is what the durable KV held when a process applied an effect.
type applyView struct {
	step    int
	key     string
	payload string
	durable task.Checkpoint
	found   bool
}

// newProc builds a process with a runner of token, following plan.
func (w *world) newProc(name string, token task.FencingToken, plan map[string]action) *proc {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{w: w, name: name, token: token, plan: plan, ctx: ctx, cancel: cancel,
		crashed: make(chan struct{}), paused: make(chan struct{}), resume: make(chan struct{}), never: make(chan struct{})}
	w.t.Cleanup(cancel)
	opts := task.RunnerOptions{Store: storeView{p}, Sink: sinkView{p}, Token: token, Now: time.Now, Rand: w.draw}
	var err error
	p.runner = suites.Construct(func() Runner {
		var r Runner
		r, err = w.e.buildRunner(opts)
		return r
	})
	if err != nil || p.runner == nil {
		w.t.Fatalf("NewRunner(Options{Token: %d, ...}) = %v, want a runner", token, err)
	}
	// Registered after the runner's Close, so it runs before it: a
	// process that died, or is still paused, ends its goroutine first.
	w.t.Cleanup(func() {
		p.ending.Store(true)
		close(p.never)
		p.onceW.Do(func() { close(p.resume) })
		if p.call != nil {
			select {
			case <-p.call.Done():
			case <-time.After(time.Second): // virtual: a runner whose actor died
			}
		}
	})
	w.h.Recordf(name, "NewRunner", "a runner with token %d", token)
	return p
}

// at applies the plan at point, phase "before" or "after" the call, once:
// a process that runs its task again finds the action gone. It returns the
// error the call must answer with, or nil; a crash never returns.
func (p *proc) at(point string, after bool) error {
	p.mu.Lock()
	a := p.plan[point]
	if fires := (after && (a == failAfter || a == crashAfter || a == pauseAfter || a == cancelAfter)) ||
		(!after && (a == failBefore || a == crashBefore || a == pauseBefore || a == cancelBefore)); fires {
		delete(p.plan, point) // each action happens once
	}
	p.mu.Unlock()
	switch {
	case a == failBefore && !after, a == failAfter && after:
		p.w.h.Recordf(p.name, point, "the call fails (%s the call)", map[bool]string{false: "before", true: "after"}[after])
		if strings.HasPrefix(point, "apply") {
			return errService
		}
		if strings.HasPrefix(point, "effect") {
			return errStep
		}
		return errStorage
	case a == crashBefore && !after, a == crashAfter && after:
		p.w.h.Record(p.name, point, "the process crashes here: nothing more runs")
		p.onceC.Do(func() { close(p.crashed) })
		<-p.never
		// The case is over: end the dead process's goroutine without
		// returning into the runner, so that nothing is left behind.
		runtime.Goexit()
	case a == pauseBefore && !after, a == pauseAfter && after:
		p.w.h.Record(p.name, point, "the process pauses here (a long GC pause, a stalled VM)")
		p.mu.Lock()
		p.pausedAt = point
		p.mu.Unlock()
		p.onceP.Do(func() { close(p.paused) })
		<-p.resume
		if p.ending.Load() {
			runtime.Goexit() // the case ended while the process was paused
		}
		p.w.h.Record(p.name, point, "the process wakes up and carries on")
	case a == cancelBefore && !after, a == cancelAfter && after:
		p.w.h.Record(p.name, point, "the caller cancels the context")
		p.cancel()
	}
	return nil
}

// start starts Run(taskID, steps) in the process's goroutine.
func (p *proc) start(taskID string, steps []task.TaskStep) {
	p.call = suites.Construct(func() *suites.Call {
		return suites.Go(func() {
			var err error
			returned := suites.Guard(p.w.t, func() { err = p.runner.Run(p.ctx, taskID, steps) })
			if !returned {
				err = errors.New("Run panicked")
			}
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			p.w.h.Record(p.name, fmt.Sprintf("Run(%s) returns", taskID), outcome(err, "nil: every step done"))
		})
	})
}

// state says where a started process stands, without waiting on a clock.
type state int

const (
	returned state = iota
	crashed
	paused
	stuck
)

func (p *proc) settle() state {
	if p.call.Settle() {
		<-p.call.Done()
		return returned
	}
	select {
	case <-p.crashed:
		return crashed
	default:
	}
	select {
	case <-p.paused:
		return paused
	default:
	}
	return stuck
}

func (s state) String() string {
	return [...]string{"returned", "crashed", "paused", "stuck (neither returned nor crashed: waiting for something that never comes)"}[s]
}

// result returns what Run returned; the process must have returned.
func (p *proc) result() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// run runs taskID's steps and waits until the process returns, crashes or
// pauses; the case fails if it ends otherwise than want.
func (p *proc) run(taskID string, steps []task.TaskStep, want state) error {
	p.w.t.Helper()
	p.start(taskID, steps)
	return p.await(want)
}

func (p *proc) await(want state) error {
	p.w.t.Helper()
	got := p.settle()
	if got != want {
		p.w.t.Fatalf("%s's Run is %s, want %s", p.name, got, want)
	}
	if got == returned {
		return p.result()
	}
	return nil
}

// mustFinish runs taskID's steps and fails the case unless Run returns nil.
func (p *proc) mustFinish(taskID string, steps []task.TaskStep) {
	p.w.t.Helper()
	if err := p.run(taskID, steps, returned); err != nil {
		p.w.t.Fatalf("%s: Run(%s) = %v, want nil", p.name, taskID, err)
	}
}

// wake lets a paused process carry on.
func (p *proc) wake() {
	p.onceW.Do(func() { close(p.resume) })
}

func (p *proc) counts() (loads, commits, effects int, applies []applyView) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loads, p.commits, p.effects, slices.Clone(p.applies)
}

// storeView is the store as one process's runner sees it.
type storeView struct{ p *proc }

func (v storeView) Load(ctx context.Context, taskID string) (task.Checkpoint, bool, error) {
	p := v.p
	p.mu.Lock()
	p.loads++
	p.mu.Unlock()
	if err := p.at("load", false); err != nil {
		return task.Checkpoint{}, false, err
	}
	cp, ok, err := p.w.store.Load(ctx, taskID)
	switch {
	case err != nil:
		p.w.h.Record(p.name, fmt.Sprintf("Load(%s)", taskID), outcome(err, ""))
	case !ok:
		p.w.h.Record(p.name, fmt.Sprintf("Load(%s)", taskID), "no checkpoint")
	default:
		p.w.h.Record(p.name, fmt.Sprintf("Load(%s)", taskID), cp.String())
		p.mu.Lock()
		p.next = cp.Next
		p.mu.Unlock()
	}
	if e := p.at("load", true); e != nil {
		return task.Checkpoint{}, false, e
	}
	return cp, ok, err
}

func (v storeView) Commit(ctx context.Context, cp task.Checkpoint) error {
	p := v.p
	p.mu.Lock()
	p.commits++
	point := fmt.Sprintf("values/%d", cp.Next)
	if cp.Next > p.next {
		point = fmt.Sprintf("commit/%d", cp.Next-1)
	}
	p.mu.Unlock()
	if err := p.at(point, false); err != nil {
		return err
	}
	err := p.w.store.Commit(ctx, cp)
	p.w.h.Record(p.name, "Commit("+cp.String()+")", outcome(err, "committed"))
	if err == nil {
		p.mu.Lock()
		p.next = max(p.next, cp.Next)
		p.mu.Unlock()
	}
	if e := p.at(point, true); e != nil {
		return e
	}
	return err
}

// sinkView is the effect service as one process's runner sees it.
type sinkView struct{ p *proc }

func (v sinkView) Apply(ctx context.Context, key, payload string) error {
	p := v.p
	p.mu.Lock()
	step := p.cur
	p.mu.Unlock()
	point := fmt.Sprintf("apply/%d", step)
	taskID, _, _ := cutLast(key)
	durable, found := p.w.kv.peek(taskID)
	p.mu.Lock()
	p.applies = append(p.applies, applyView{step: step, key: key, payload: payload, durable: durable, found: found})
	p.mu.Unlock()
	if err := p.at(point, false); err != nil {
		p.w.h.Recordf(p.name, fmt.Sprintf("Apply(%q)", key), "error: %v (not applied)", err)
		return err
	}
	if err := ctx.Err(); err != nil {
		p.w.h.Recordf(p.name, fmt.Sprintf("Apply(%q)", key), "error: %v (not applied)", err)
		return err
	}
	performed, err := p.w.sink.apply(key, payload)
	switch {
	case err != nil:
		p.w.h.Record(p.name, fmt.Sprintf("Apply(%q)", key), "error: "+err.Error())
	case performed:
		p.w.h.Recordf(p.name, fmt.Sprintf("Apply(%q)", key), "performed: %q", payload)
	default:
		p.w.h.Record(p.name, fmt.Sprintf("Apply(%q)", key), "already performed with this payload: nothing done again")
	}
	if e := p.at(point, true); e != nil {
		return e
	}
	return err
}

func cutLast(key string) (string, string, bool) {
	i := strings.LastIndex(key, "/")
	if i < 0 {
		return key, "", false
	}
	return key[:i], key[i+1:], true
}

// ---- the steps ----

// spec describes the steps of a task: per step, the values it draws, in
// order ("now", "rand").
type spec [][]string

var (
	plainSteps = spec{{}, {}, {}}
	drawSteps  = spec{{"now"}, {"rand", "now", "rand"}, {}}
)

var stepNames = []string{"book the venue", "quote the customer", "send the contract", "notify the team", "close the file", "archive"}

// steps returns the steps of spec for process p. Each step's payload names
// the task, the step and every value it drew, so a step that draws other
// values sends another payload.
func (p *proc) steps(taskID string, s spec) []task.TaskStep {
	out := make([]task.TaskStep, len(s))
	for i, draws := range s {
		name := stepNames[i%len(stepNames)]
		out[i] = task.TaskStep{Name: name, Effect: func(rec task.Recorder) (string, error) {
			point := fmt.Sprintf("effect/%d", i)
			p.mu.Lock()
			p.cur = i
			p.effects++
			p.mu.Unlock()
			if err := p.at(point, false); err != nil {
				p.w.logRun(stepRun{proc: p.name, taskID: taskID, step: i})
				return "", fmt.Errorf("%s: %w", name, err)
			}
			var vals []string
			for _, d := range draws {
				switch d {
				case "now":
					vals = append(vals, rec.Now().UTC().Format(time.RFC3339Nano))
				case "rand":
					vals = append(vals, fmt.Sprint(rec.Rand()))
				}
			}
			p.w.logRun(stepRun{proc: p.name, taskID: taskID, step: i, values: vals})
			p.w.h.Recordf(p.name, fmt.Sprintf("step %d (%s)", i, name), "computes its effect%s", describeValues(vals))
			if e := p.at(point, true); e != nil {
				return "", e
			}
			return payloadOf(taskID, i, name, vals), nil
		}}
	}
	return out
}

func payloadOf(taskID string, i int, name string, vals []string) string {
	s := fmt.Sprintf("%s: %s (step %d)", taskID, name, i)
	if len(vals) > 0 {
		s += " with " + strings.Join(vals, ", ")
	}
	return s
}

func describeValues(vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return ", drawing " + strings.Join(vals, ", ")
}

func outcome(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

// stepKey is the idempotency key the README gives step i of taskID.
func stepKey(taskID string, i int) string {
	return fmt.Sprintf("%s/%d", taskID, i)
}

// ---- assertions ----

// mustBeDone fails the case unless every step of taskID was applied
// exactly once under its key, and the checkpoint says the task is done.
func (w *world) mustBeDone(taskID string, n int, token task.FencingToken, when string) {
	w.t.Helper()
	order, applied, _ := w.sink.snapshot()
	var mine []string
	for _, k := range order {
		if t, _, _ := cutLast(k); t == taskID {
			mine = append(mine, k)
		}
	}
	var want []string
	for i := range n {
		want = append(want, stepKey(taskID, i))
	}
	if !slices.Equal(mine, want) {
		w.t.Fatalf("%s, the effects performed for %s are %q, want %q: every step once, in order, under its key", when, taskID, mine, want)
	}
	for i := range n {
		got := applied[stepKey(taskID, i)]
		var computed []string
		for _, r := range w.runsOf(taskID, i) {
			computed = append(computed, payloadOf(taskID, i, stepNames[i%len(stepNames)], r.values))
		}
		if len(computed) > 0 && !slices.Contains(computed, got) {
			w.t.Fatalf("%s, step %d's effect was %q, want one of the payloads its runs computed, %q", when, i, got, computed)
		}
	}
	cp, ok := w.kv.peek(taskID)
	if !ok || cp.Next != n || cp.Total != n || (token != 0 && cp.Token != token) {
		w.t.Fatalf("%s, the checkpoint of %s is %s (found %v), want step %d of %d with token %d", when, taskID, cp, ok, n, n, token)
	}
}

// mustNotMoveBack fails the case if the checkpoints of taskID the KV
// stored ever went back: a lower token after a higher one, or a lower Next
// with the same token. (A higher token with a lower Next is a runner that
// loaded the task before another moved it on: fencing orders writers, not
// what they read; it runs the steps again under their keys.)
func (w *world) mustNotMoveBack(taskID string) {
	w.t.Helper()
	puts := w.kv.putsOf(taskID)
	for i := 1; i < len(puts); i++ {
		a, b := puts[i-1], puts[i]
		if b.Token < a.Token || (b.Token == a.Token && b.Next < a.Next) {
			w.t.Fatalf("the checkpoint of %s moved backwards: %s was followed by %s", taskID, a, b)
		}
	}
}

// runtimeGosched lets other goroutines run.
func runtimeGosched() { runtime.Gosched() }
