package ambiguoussuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// The harness: a small system around the student's worker. It has the
// provider, a durable store, a queue that delivers every task at least once,
// and the worker, which it replaces with a new process (a new value built
// by the student's constructor) after every crash.
//
// A crash is injected through the worker's dependencies, never through
// anything the worker calls on purpose: when a crash plan picks a call to
// the store, the provider or the queue's Ack, the call ends the calling
// goroutine with runtime.Goexit, either before the call has any effect or
// right after it took effect. Goexit cannot be recovered, so the worker
// cannot tell a crash from the process dying. Every later call from that
// process ends its goroutine too: a dead process writes nothing more.

// constructor builds one worker process.
type constructor func(task.Deps) Worker

const (
	// account is the provider account every task runs under.
	account = "acme"

	// lease is the deadline of each Process call: how long the queue lets
	// a worker hold a delivery.
	lease = 10 * time.Minute

	// visibility is how long an unacknowledged task stays invisible before
	// the queue delivers it again.
	visibility = time.Minute

	// maxDeliveries is how often the queue delivers one task before the
	// suite gives up on it.
	maxDeliveries = 12

	// maxIdle is how many deliveries in a row may fail without a single
	// dependency call (an unfinished worker) before the queue gives up.
	maxIdle = 3

	// callsPerTask bounds the dependency calls of a scenario, per task, so
	// that a worker stuck in a retry loop is stopped with a clear message.
	callsPerTask = 150

	// settle is how long the suite waits after the last delivery before it
	// counts what the customers received: requests still on their way to
	// the provider land in the meantime.
	settle = 10 * time.Minute
)

// crash says what a crash plan does to one dependency call.
type crash int

const (
	noCrash       crash = iota
	crashBefore         // the process dies before the call has any effect
	crashAfter          // the call takes effect; the process dies before it returns
	crashInFlight       // Send only: the request reaches the provider; the process dies waiting

	// The faults below leave the process alive: the call returns, and the
	// worker sees what happened.
	failBefore   // the call fails with an ordinary error and has no effect
	failAfter    // the call takes effect, then fails with an ordinary error
	timeoutAfter // Send only: the provider commits, then the call fails with a 504 (an error wrapping provider.ErrTimeout) while ctx is alive
	cancelBefore // the delivery's context is cancelled just before the call (a shutdown); the call then proceeds
	refuseBefore // Status, Find only: the provider refuses the lookup (401 unauthorized) and looks nothing up
)

// isCrash reports whether c kills the process.
func (c crash) isCrash() bool { return c == crashBefore || c == crashAfter || c == crashInFlight }

// The ordinary errors a live dependency returns.
var (
	errStore   = errors.New("store: connection reset by peer")
	errQueue   = errors.New("queue: ack: connection reset by peer")
	errNetwork = errors.New("network: connection reset by peer")
)

// call is one call a worker process makes to its dependencies while it
// processes a delivery, as a crash plan sees it.
type call struct {
	inc          int    // the worker process: 1 for the first one
	seq          int    // position among the process's calls, from 1
	op           string // "Load", "Save", "Send", "Status", "Find", "Ack"
	arg          string // Send, Status: the key; Find: the reference; Save: the new state; Load, Ack: the task id
	task         string // the task being processed
	afterReceipt bool   // a Send of this process has returned a receipt before this call
}

func (c call) String() string {
	switch c.op {
	case "Load", "Ack":
		return fmt.Sprintf("%s(%s)", c.op, c.arg)
	case "Save":
		return fmt.Sprintf("Save(%s, {%s ...})", c.task, c.arg)
	}
	return fmt.Sprintf("%s(%s)", c.op, c.arg)
}

// scenario is one run of the system: tasks to deliver, faults, crashes, and
// what must be true at the end.
type scenario struct {
	name  string
	tasks []task.Task

	// again are tasks the queue delivers once more, againAfter (default an
	// hour) after every task was settled: at-least-once delivery's late
	// duplicates.
	again      []task.Task
	againAfter time.Duration

	// opts configure the provider.
	opts provider.Options

	// setup scripts the provider before the first delivery.
	setup func(e *env)

	// plan picks the crashes and the faults of live calls; nil means none.
	// At most maxCrashes crashes fire (default 1); faults that leave the
	// process alive are not counted.
	plan       func(e *env, c call) crash
	maxCrashes int

	// seed seeds e.rng, for plans and chaos that draw at random.
	seed int64

	// redelivery is the delay before an unacknowledged task is delivered
	// again, given whether the worker crashed; nil means visibility.
	redelivery func(crashed bool) time.Duration

	// expect checks the end state; nil means expectSentOnce.
	expect func(e *env) []string

	// watch holds the rules whose invariants the run checks on every call
	// (see invariants); playAll and probe fill it from the case's Rules.
	watch []string
}

// invariants maps each invariant the harness can check on every call to
// the rule it enforces. A case checks the invariants of the rules it
// names, so that a failure is reported under a case about that rule.
var invariants = map[string]string{
	"send-unsaved": "R3",  // no Send unless the store holds the key
	"op-replaced":  "R4",  // no Save that replaces the operation id
	"ack-pending":  "R11", // no Ack while the record says pending
	"nil-return":   "R12", // nil only when sent, recorded and acknowledged
	"unwrapped":    "R12", // a store's or the queue's error is returned wrapped
	"throttle":     "R9",  // no provider call before a throttle's Retry-After
}

// rulesOf maps each case's name to its Rules.
var rulesOf = map[string][]string{}

func init() {
	for _, tc := range tests {
		rulesOf[tc.Case.Name] = tc.Case.Rules
	}
}

// caseRules returns the Rules of the case t runs, from its subtest name.
func caseRules(t testing.TB) []string {
	name := t.Name()
	return rulesOf[name[strings.LastIndex(name, "/")+1:]]
}

// incarnation is one worker process.
type incarnation struct {
	n    int
	name string // "worker #1"
	w    Worker
	dead chan struct{}
	once sync.Once

	// Guarded by env.mu.
	processing bool
	seq        int
	receipts   int
}

func (inc *incarnation) isDead() bool {
	select {
	case <-inc.dead:
		return true
	default:
		return false
	}
}

// env is the system of one scenario run.
type env struct {
	h         *suites.History
	p         *provider.Provider
	newWorker constructor
	sc        *scenario
	rng       *rand.Rand

	mu         sync.Mutex
	records    map[string]task.Record   // the durable store
	saves      map[string][]task.Record // every record saved, per task
	nextID     int
	inc        *incarnation // the running process, nil after a crash
	incs       int
	crashes    int
	calls      int
	runaway    bool
	trace      []call
	current    string              // the task being processed
	deliveries map[string]int      // per task
	acks       map[string]int      // per task
	keys       map[string][]string // keys of the Sends made for each task
	returns    map[string][]error  // what each Process call for a task returned
	crashed    map[string]int      // crashes while processing each task
	problems   []string
	seen       map[string]bool // invariants already reported
	step       int             // the next step of a plan made of steps
	beforeSend func(ctx context.Context, account, key string, req provider.SendRequest)

	cancel     context.CancelFunc // cancels the current delivery's context
	throttled  time.Time          // no provider call before this: the last throttle's Retry-After
	throttle   time.Duration      // that throttle's Retry-After
	ackedOK    bool               // an Ack of the current delivery returned nil
	injected   error              // the store's or the queue's error injected into the current delivery
	sendsUntil map[string]int     // Sends per task before the late duplicates
	lateReturn map[string][]error // what the late duplicates' Process calls returned

	// refusals holds, per task, the last definite refusal of a Send that
	// reached the worker; refusedAt is len(trace) when it did.
	refusals  map[string]error
	refusedAt int
}

func newEnv(h *suites.History, newWorker constructor, sc *scenario) *env {
	e := &env{
		h:          h,
		p:          provider.New(sc.opts),
		newWorker:  newWorker,
		sc:         sc,
		rng:        rand.New(rand.NewPCG(uint64(sc.seed), 0x03)),
		records:    map[string]task.Record{},
		saves:      map[string][]task.Record{},
		deliveries: map[string]int{},
		acks:       map[string]int{},
		keys:       map[string][]string{},
		returns:    map[string][]error{},
		crashed:    map[string]int{},
		seen:       map[string]bool{},
		sendsUntil: map[string]int{},
		lateReturn: map[string][]error{},
		refusals:   map[string]error{},
	}
	e.p.OnEvent(func(ev provider.Event) {
		action, outcome := providerLine(ev)
		h.Record("provider", action, outcome)
	})
	return e
}

func providerLine(ev provider.Event) (action, outcome string) {
	if ev.Op == "" {
		return "configured", ev.Outcome
	}
	what := "key"
	if ev.Op == provider.OpFind {
		what = "reference"
	}
	action = fmt.Sprintf("%s(%s %s)", ev.Op, what, ev.Key)
	if ev.Fault != provider.FaultNone {
		action += " [" + ev.Fault.String() + "]"
	}
	return action, ev.Outcome
}

// play runs sc in a new system inside the current bubble, recording into h,
// and returns the env and what went wrong.
func play(h *suites.History, newWorker constructor, sc *scenario) (*env, []string) {
	e := newEnv(h, newWorker, sc)
	if sc.setup != nil {
		sc.setup(e)
	}
	e.run()
	expect := sc.expect
	if expect == nil {
		expect = (*env).expectSentOnce
	}
	e.mu.Lock()
	problems := append([]string(nil), e.problems...)
	e.mu.Unlock()
	return e, append(problems, expect(e)...)
}

// playAll plays each scenario quietly and stops at the first that goes
// wrong. It plays that one again into the case's history, so the timeline
// the student reads is exactly the failing run, and fails t with its
// problems. Scenarios are deterministic, so the second run is the first
// one again.
func playAll(t testing.TB, h *suites.History, newWorker constructor, scs ...*scenario) {
	t.Helper()
	for _, sc := range scs {
		sc.watch = caseRules(t)
	}
	for i, sc := range scs {
		if _, problems := play(suites.NewHistory(), newWorker, sc); len(problems) > 0 {
			failScenario(t, h, newWorker, sc, i, len(scs), problems)
			return
		}
	}
}

// failScenario replays sc into h and reports its problems.
func failScenario(t testing.TB, h *suites.History, newWorker constructor, sc *scenario, i, n int, problems []string) {
	t.Helper()
	h.Restart()
	if n > 1 {
		h.Note("scenario %d of %d: %s", i+1, n, sc.name)
	} else {
		h.Note("scenario: %s", sc.name)
	}
	if _, again := play(h, newWorker, sc); len(again) > 0 {
		problems = again
	} else {
		problems = append(problems, "(played a second time, this scenario passed: the worker does not behave the same way on every run)")
	}
	t.Errorf("scenario %q:\n%s", sc.name, strings.Join(problems, "\n"))
}

// run is the queue: it delivers every task until it is acknowledged or has
// been delivered maxDeliveries times, one delivery at a time, in order of
// visibility.
func (e *env) run() {
	type entry struct {
		task task.Task
		at   time.Time
	}
	var queue []entry
	idleRuns := map[string]int{}
	for _, t := range e.sc.tasks {
		queue = append(queue, entry{t, time.Now()})
	}
	for len(queue) > 0 && !e.stopped() {
		slices.SortStableFunc(queue, func(a, b entry) int { return a.at.Compare(b.at) })
		next := queue[0]
		queue = queue[1:]
		if d := time.Until(next.at); d > 0 {
			time.Sleep(d)
		}
		crashed, acked, idle := e.deliver(next.task)
		if acked || e.count(e.deliveries, next.task.ID) >= maxDeliveries {
			continue
		}
		if idle {
			idleRuns[next.task.ID]++
		} else {
			idleRuns[next.task.ID] = 0
		}
		if idleRuns[next.task.ID] == maxIdle {
			e.h.Note("the queue stops delivering %s: %d deliveries in a row returned an error without a single call to the store, the provider or Ack", next.task.ID, maxIdle)
			continue
		}
		delay := visibility
		if e.sc.redelivery != nil {
			delay = e.sc.redelivery(crashed)
		}
		if delay != visibility {
			e.h.Note("the queue holds %s back for %v", next.task.ID, delay)
		}
		queue = append(queue, entry{next.task, time.Now().Add(delay)})
	}
	if len(e.sc.again) > 0 && !e.stopped() {
		after := e.sc.againAfter
		if after == 0 {
			after = time.Hour
		}
		e.mu.Lock()
		for id, keys := range e.keys {
			e.sendsUntil[id] = len(keys)
		}
		e.mu.Unlock()
		time.Sleep(after)
		for _, t := range e.sc.again {
			e.h.Note("%v later the queue delivers %s once more (at least once: a late duplicate)", after, t.ID)
			e.mu.Lock()
			n := len(e.returns[t.ID])
			e.mu.Unlock()
			e.deliver(t)
			e.mu.Lock()
			if len(e.returns[t.ID]) > n {
				e.lateReturn[t.ID] = append(e.lateReturn[t.ID], e.returns[t.ID][n])
			}
			e.mu.Unlock()
		}
	}
	// Requests still on their way reach the provider before anyone counts.
	time.Sleep(settle)
	e.recordInboxes()
}

func (e *env) stopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runaway
}

func (e *env) count(m map[string]int, k string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return m[k]
}

// process returns the running worker process, starting a new one (a
// restart) if there is none.
func (e *env) process() *incarnation {
	if e.inc != nil && !e.inc.isDead() {
		return e.inc
	}
	e.incs++
	inc := &incarnation{n: e.incs, name: fmt.Sprintf("worker #%d", e.incs), dead: make(chan struct{})}
	if inc.n > 1 {
		e.h.Record(inc.name, "starts", "a new process: nothing in memory, the same store and provider")
	}
	deps := task.Deps{Provider: apiProxy{e, inc}, Store: storeProxy{e, inc}, NewID: e.newID}
	inc.w = suites.Construct(func() Worker { return e.newWorker(deps) })
	e.inc = inc
	return inc
}

// deliver hands one delivery of task to the running worker process and
// waits until Process returns or the process dies. idle reports a delivery
// that returned an error without calling any dependency.
func (e *env) deliver(tk task.Task) (crashed, acked, idle bool) {
	inc := e.process()
	e.mu.Lock()
	callsBefore := e.calls
	e.deliveries[tk.ID]++
	n := e.deliveries[tk.ID]
	e.current = tk.ID
	inc.processing = true
	e.ackedOK, e.injected = false, nil
	// A throttle binds the calls that follow it in its delivery (R9): a
	// later delivery, perhaps in a new process, knows nothing of it.
	e.throttled = time.Time{}
	e.mu.Unlock()
	e.h.Record("queue", fmt.Sprintf("delivers %s (delivery %d)", tk.ID, n), "to "+inc.name)

	ctx, cancel := context.WithTimeout(context.Background(), lease)
	defer cancel()
	e.mu.Lock()
	e.cancel = cancel
	e.mu.Unlock()
	d := task.Delivery{Task: tk, Attempt: n, Ack: e.ack(inc, tk)}
	result := make(chan error, 1)
	suites.Go(func() {
		// A panic kills a real process: report it, and treat it as a
		// crash, rather than let it end the whole test binary.
		defer func() {
			if r := recover(); r != nil {
				e.problem("Process(%s) panicked: %v\n%s", tk.ID, r, suites.PanicStack())
				inc.once.Do(func() {
					e.h.Record(inc.name, "PANICS", fmt.Sprint(r))
					close(inc.dead)
				})
			}
		}()
		result <- inc.w.Process(ctx, d)
	})
	hung := time.NewTimer(lease + time.Minute)
	defer hung.Stop()
	var err error
	returned := false
	select {
	case err = <-result:
		returned = true
	case <-inc.dead:
	case <-hung.C:
		e.h.Record(inc.name, fmt.Sprintf("Process(%s)", tk.ID), "still running a minute after its deadline: the suite replaces the process")
		e.problem("Process(%s) was still running %v after its context's deadline, want it to return (and leave the task unacknowledged) when ctx is done", tk.ID, time.Minute)
		inc.once.Do(func() { close(inc.dead) })
	}

	e.mu.Lock()
	inc.processing = false
	if inc.isDead() {
		crashed = true
		e.crashed[tk.ID]++
		e.inc = nil
	} else if returned {
		e.returns[tk.ID] = append(e.returns[tk.ID], err)
		// nil promises that the task is sent, recorded and acknowledged.
		if rec := e.records[tk.ID]; err == nil && (rec.State != task.Sent || !e.ackedOK) {
			why := fmt.Sprintf("the store holds {%s}", rec)
			if rec.State == task.Sent {
				why = "no Ack of this delivery returned nil"
			}
			e.invariant("nil-return", "Process(%s) = nil, want an error: %s, and nil means the task is sent, recorded and acknowledged", tk.ID, why)
		}
		if err != nil && e.injected != nil && !errors.Is(err, e.injected) {
			e.invariant("unwrapped", "Process(%s) = %q, want an error wrapping the one it got (%q): wrap with %%w, so that the caller can tell what failed", tk.ID, err, e.injected)
		}
	}
	acked = e.acks[tk.ID] > 0
	idle = returned && err != nil && e.calls == callsBefore
	e.mu.Unlock()
	if returned && !crashed {
		e.h.Record(inc.name, fmt.Sprintf("Process(%s)", tk.ID), describeErr(err))
	}
	return crashed, acked, idle
}

func describeErr(err error) string {
	if err == nil {
		return "returns nil"
	}
	return "returns error: " + err.Error()
}

func (e *env) problem(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

// newID is Deps.NewID: unique across every process of the run.
func (e *env) newID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID++
	return fmt.Sprintf("op-%06d", e.nextID)
}

// enter is the start of every dependency call: it ends the goroutine of a
// dead process, stops a runaway worker, adds the call to the trace and asks
// the crash plan what to do.
func (e *env) enter(inc *incarnation, c call) crash {
	if inc.isDead() {
		runtime.Goexit() // a dead process makes no more calls
	}
	e.mu.Lock()
	if !inc.processing {
		e.mu.Unlock()
		return noCrash // a call from the constructor, or between deliveries
	}
	e.calls++
	if e.calls > callsPerTask*len(e.sc.tasks) {
		first := !e.runaway
		e.runaway = true
		e.mu.Unlock()
		if first {
			e.problem("the worker made more than %d calls to the provider, the store and the queue for %d task(s), and the suite stopped it: is it retrying something that can never succeed, or retrying without waiting?", callsPerTask*len(e.sc.tasks), len(e.sc.tasks))
		}
		e.die(inc, "stopped by the suite: too many calls")
	}
	inc.seq++
	c.inc, c.seq, c.task, c.afterReceipt = inc.n, inc.seq, e.current, inc.receipts > 0
	if c.op == "Send" || c.op == "Status" || c.op == "Find" {
		if now := time.Now(); now.Before(e.throttled) {
			e.invariant("throttle", "%s came %v after the provider throttled the worker with Retry-After %v, want the next call to the provider to wait at least that long", c, e.throttle-e.throttled.Sub(now), e.throttle)
		}
	}
	e.trace = append(e.trace, c)
	act := noCrash
	limit := max(e.sc.maxCrashes, 1)
	if e.sc.plan != nil {
		act = e.sc.plan(e, c)
		switch {
		case act == crashInFlight && c.op != "Send":
			act = crashAfter
		case act == timeoutAfter && c.op != "Send":
			act = failAfter
		case act == refuseBefore && c.op != "Status" && c.op != "Find":
			act = failBefore
		}
		if act.isCrash() {
			if e.crashes < limit {
				e.crashes++
			} else {
				act = noCrash
			}
		}
	}
	cancel := e.cancel
	e.mu.Unlock()
	if act == cancelBefore {
		e.h.Record("queue", "cancels the delivery's context", fmt.Sprintf("just before %s: the worker is shutting down", c))
		cancel()
		act = noCrash
	}
	return act
}

// invariant adds a problem once per kind: the first violation of a rule is
// the one worth reading. The caller holds e.mu.
func (e *env) invariant(kind, format string, args ...any) {
	if e.seen[kind] || !slices.Contains(e.sc.watch, invariants[kind]) {
		return
	}
	e.seen[kind] = true
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

// failed records that the dependency call what failed with err, the
// process alive, and returns err for the worker.
func (e *env) failed(inc *incarnation, what string, after bool, err error) error {
	how := "fails, without effect"
	if after {
		how = "takes effect, then fails"
	}
	e.h.Record(inc.name, what, how+": "+err.Error())
	if err == errStore || err == errQueue {
		e.mu.Lock()
		e.injected = err
		e.mu.Unlock()
	}
	return err
}

// refuseLookup records that the provider refused the lookup what, as it
// does for an API token it no longer accepts, and returns the refusal. The
// lookup says nothing about the request it asked about.
func (e *env) refuseLookup(what string) error {
	err := fmt.Errorf("%s: %w: the account's API token was rotated, and this worker still sends the old one", what, provider.ErrUnauthorized)
	e.h.Record("provider", what, "refuses it, looking nothing up: "+err.Error())
	return err
}

// die records the crash of inc and ends the calling goroutine.
func (e *env) die(inc *incarnation, how string) {
	inc.once.Do(func() {
		e.h.Record(inc.name, "CRASHES", how)
		close(inc.dead)
	})
	runtime.Goexit()
}

// ack returns the Ack function of one delivery.
func (e *env) ack(inc *incarnation, tk task.Task) func(context.Context) error {
	return func(context.Context) error {
		act := e.enter(inc, call{op: "Ack", arg: tk.ID})
		switch act {
		case crashBefore:
			e.die(inc, fmt.Sprintf("while calling Ack(%s), before the queue got the acknowledgement", tk.ID))
		case failBefore:
			return e.failed(inc, fmt.Sprintf("Ack(%s)", tk.ID), false, errQueue)
		}
		e.mu.Lock()
		e.acks[tk.ID]++
		if rec, ok := e.records[tk.ID]; !ok || rec.State == task.Pending {
			e.invariant("ack-pending", "Ack(%s) was called while the store held %s, want the outcome (sent or failed) saved before the delivery is acknowledged: after the acknowledgement nobody finishes the task", tk.ID, describeRecord(rec, ok))
		}
		if act == noCrash {
			e.ackedOK = true
		}
		e.mu.Unlock()
		e.h.Record(inc.name, fmt.Sprintf("Ack(%s)", tk.ID), "the queue removes the task")
		switch act {
		case failAfter:
			return e.failed(inc, fmt.Sprintf("Ack(%s)", tk.ID), true, errQueue)
		case noCrash:
			return nil
		}
		e.die(inc, fmt.Sprintf("right after the queue got Ack(%s)", tk.ID))
		return nil
	}
}

// storeProxy is the durable store as one worker process sees it.
type storeProxy struct {
	e   *env
	inc *incarnation
}

// Load implements Store.
func (s storeProxy) Load(ctx context.Context, taskID string) (task.Record, bool, error) {
	e := s.e
	act := e.enter(s.inc, call{op: "Load", arg: taskID})
	switch act {
	case crashBefore:
		e.die(s.inc, fmt.Sprintf("while calling store.Load(%s)", taskID))
	case failBefore, failAfter:
		return task.Record{}, false, e.failed(s.inc, fmt.Sprintf("store.Load(%s)", taskID), false, errStore)
	}
	e.mu.Lock()
	r, ok := e.records[taskID]
	e.mu.Unlock()
	out := "no record"
	if ok {
		out = r.String()
	}
	e.h.Record(s.inc.name, fmt.Sprintf("store.Load(%s)", taskID), out)
	if act != noCrash {
		e.die(s.inc, fmt.Sprintf("right after store.Load(%s) answered, before the worker saw the answer", taskID))
	}
	return r, ok, nil
}

func describeRecord(r task.Record, ok bool) string {
	if !ok {
		return "no record"
	}
	return "{" + r.String() + "}"
}

// Save implements Store.
func (s storeProxy) Save(ctx context.Context, taskID string, r task.Record) error {
	e := s.e
	act := e.enter(s.inc, call{op: "Save", arg: string(r.State)})
	switch act {
	case crashBefore:
		e.die(s.inc, fmt.Sprintf("while calling store.Save(%s, {%s}), before the write took effect", taskID, r))
	case failBefore:
		return e.failed(s.inc, fmt.Sprintf("store.Save(%s, {%s})", taskID, r), false, errStore)
	}
	e.mu.Lock()
	if old, ok := e.records[taskID]; ok && old.OperationID != r.OperationID {
		e.invariant("op-replaced", "store.Save(%q, {%s}) replaced the operation id %s with %s, want one operation id per task, kept for ever: every Send for the task uses the one saved first", taskID, r, old.OperationID, r.OperationID)
	}
	e.records[taskID] = r
	e.saves[taskID] = append(e.saves[taskID], r)
	e.mu.Unlock()
	e.h.Record(s.inc.name, fmt.Sprintf("store.Save(%s)", taskID), r.String())
	if act == failAfter {
		return e.failed(s.inc, fmt.Sprintf("store.Save(%s)", taskID), true, errStore)
	}
	if act != noCrash {
		e.die(s.inc, fmt.Sprintf("right after store.Save(%s) took effect, before it returned", taskID))
	}
	return nil
}

// apiProxy is the provider as one worker process sees it.
type apiProxy struct {
	e   *env
	inc *incarnation
}

// Send implements provider.API.
func (a apiProxy) Send(ctx context.Context, acct, key string, req provider.SendRequest) (provider.Receipt, error) {
	e := a.e
	act := e.enter(a.inc, call{op: "Send", arg: key})
	e.mu.Lock()
	e.keys[e.current] = append(e.keys[e.current], key)
	hook := e.beforeSend
	e.beforeSend = nil
	e.mu.Unlock()
	switch act {
	case crashBefore:
		e.die(a.inc, fmt.Sprintf("while calling Send(%s), before the request left the process", key))
	case failBefore:
		return provider.Receipt{}, e.failed(a.inc, fmt.Sprintf("Send(%s)", key), false, errNetwork)
	case crashInFlight:
		// The request is on the wire. The provider goes on with it; the
		// process that sent it is gone.
		// Settle returns once the request is inside the provider (parked
		// there, or answered), so the timeline shows it before the crash.
		suites.Go(func() { e.p.Send(context.WithoutCancel(ctx), acct, key, req) }).Settle()
		e.die(a.inc, fmt.Sprintf("while Send(%s) is on its way: the provider has the request, the worker is gone", key))
	}
	e.mu.Lock()
	if rec, ok := e.records[e.current]; !ok || rec.OperationID != key {
		e.invariant("send-unsaved", "Send(%s) for %s was made while the store held %s, want the operation id saved before anything is sent: a request the store does not name cannot be found again after a crash", key, e.current, describeRecord(rec, ok))
	}
	e.mu.Unlock()
	if hook != nil {
		hook(ctx, acct, key, req)
	}
	r, err := e.p.Send(ctx, acct, key, req)
	switch act {
	case crashAfter:
		e.die(a.inc, fmt.Sprintf("after the provider handled Send(%s), before its answer reached the worker", key))
	case failAfter:
		return provider.Receipt{}, e.failed(a.inc, fmt.Sprintf("Send(%s)", key), true, errNetwork)
	case timeoutAfter:
		return provider.Receipt{}, e.failed(a.inc, fmt.Sprintf("Send(%s)", key), true, fmt.Errorf("504 gateway timeout: %w", provider.ErrTimeout))
	}
	e.mu.Lock()
	switch {
	case err == nil:
		a.inc.receipts++
	case refusalOf(err) != nil:
		e.refusals[e.current], e.refusedAt = err, len(e.trace)
	}
	e.mu.Unlock()
	e.noteNoAnswer(a.inc, "Send", key, err)
	return r, err
}

// refusalOf returns the definite refusal err wraps (R7), or nil.
func refusalOf(err error) error {
	for _, r := range []error{provider.ErrParameterMismatch, provider.ErrInvalidRequest, provider.ErrUnauthorized} {
		if errors.Is(err, r) {
			return r
		}
	}
	return nil
}

// noteNoAnswer records a call that ended without an answer: the provider's
// log says what it did, but not that the worker never heard of it. It also
// notes a throttle's Retry-After, before which no call may follow.
func (e *env) noteNoAnswer(inc *incarnation, op, key string, err error) {
	if ra, ok := provider.RetryAfter(err); ok {
		e.mu.Lock()
		e.throttled, e.throttle = time.Now().Add(ra), ra
		e.mu.Unlock()
	}
	if provider.Ambiguous(err) {
		e.h.Record(inc.name, fmt.Sprintf("%s(%s)", op, key), "gets no answer: "+err.Error())
	}
}

// Status implements provider.API.
func (a apiProxy) Status(ctx context.Context, acct, key string) (provider.Receipt, error) {
	e := a.e
	act := e.enter(a.inc, call{op: "Status", arg: key})
	switch act {
	case crashBefore:
		e.die(a.inc, fmt.Sprintf("while calling Status(%s), before the request left the process", key))
	case failBefore:
		return provider.Receipt{}, e.failed(a.inc, fmt.Sprintf("Status(%s)", key), false, errNetwork)
	case refuseBefore:
		return provider.Receipt{}, e.refuseLookup(fmt.Sprintf("Status(%s)", key))
	}
	r, err := e.p.Status(ctx, acct, key)
	if act == failAfter {
		return provider.Receipt{}, e.failed(a.inc, fmt.Sprintf("Status(%s)", key), true, errNetwork)
	}
	if act != noCrash {
		e.die(a.inc, fmt.Sprintf("after the provider answered Status(%s), before the answer reached the worker", key))
	}
	e.noteNoAnswer(a.inc, "Status", key, err)
	return r, err
}

// Find implements provider.API.
func (a apiProxy) Find(ctx context.Context, acct, reference string) ([]provider.Receipt, error) {
	e := a.e
	act := e.enter(a.inc, call{op: "Find", arg: reference})
	switch act {
	case crashBefore:
		e.die(a.inc, fmt.Sprintf("while calling Find(%s), before the request left the process", reference))
	case failBefore:
		return nil, e.failed(a.inc, fmt.Sprintf("Find(%s)", reference), false, errNetwork)
	case refuseBefore:
		return nil, e.refuseLookup(fmt.Sprintf("Find(%s)", reference))
	}
	r, err := e.p.Find(ctx, acct, reference)
	if act == failAfter {
		return nil, e.failed(a.inc, fmt.Sprintf("Find(%s)", reference), true, errNetwork)
	}
	if act != noCrash {
		e.die(a.inc, fmt.Sprintf("after the provider answered Find(%s), before the answer reached the worker", reference))
	}
	e.noteNoAnswer(a.inc, "Find", reference, err)
	return r, err
}

// recordInboxes adds to the history what every customer of the scenario
// actually received.
func (e *env) recordInboxes() {
	var recipients []string
	for _, t := range e.sc.tasks {
		if !slices.Contains(recipients, t.Recipient) {
			recipients = append(recipients, t.Recipient)
		}
	}
	for _, r := range recipients {
		ds := e.p.Deliveries(r)
		var items []string
		for _, d := range ds {
			items = append(items, fmt.Sprintf("%s (%s, key %s)", d.RequestID, d.DocumentID, d.Key))
		}
		e.h.Record("inbox", fmt.Sprintf("customer %s has received %s", r, plural(len(ds), "signing request")), strings.Join(items, ", "))
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// deliveriesOf returns what task's recipient received of task's document.
func (e *env) deliveriesOf(tk task.Task) []provider.Delivery {
	var out []provider.Delivery
	for _, d := range e.p.Deliveries(tk.Recipient) {
		if d.DocumentID == tk.DocumentID && d.Account == tk.Account {
			out = append(out, d)
		}
	}
	return out
}

// expectSentOnce checks the end state every task should reach: its customer
// received its signing request exactly once, its durable record says sent
// with that request's id, and the queue got its acknowledgement.
func (e *env) expectSentOnce() []string {
	var problems []string
	for _, tk := range e.sc.tasks {
		problems = append(problems, e.expectTaskSent(tk)...)
	}
	return problems
}

func (e *env) expectTaskSent(tk task.Task) []string {
	var problems []string
	ds := e.deliveriesOf(tk)
	if len(ds) != 1 {
		msg := fmt.Sprintf("customer %s has received %s for %s (%s), want 1", tk.Recipient, plural(len(ds), "signing request"), tk.DocumentID, tk.ID)
		if len(ds) > 1 {
			var keys []string
			for _, d := range ds {
				keys = append(keys, d.Key)
			}
			msg += fmt.Sprintf(": they were sent with the keys %s", strings.Join(keys, ", "))
		}
		problems = append(problems, msg)
	}
	e.mu.Lock()
	rec, ok := e.records[tk.ID]
	acks := e.acks[tk.ID]
	deliveries := e.deliveries[tk.ID]
	returns := e.returns[tk.ID]
	crashes := e.crashed[tk.ID]
	e.mu.Unlock()
	if len(ds) == 1 {
		want := ds[0].RequestID
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = no record, want sent %s", tk.ID, want))
		case rec.State == task.Sent && rec.RequestID == want:
		case rec.State == task.Failed:
			problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want sent %s: the task is recorded failed although %s received the signing request", tk.ID, rec, want, tk.Recipient))
		case rec.State == task.Pending && acks > 0:
			problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want sent %s: the task was acknowledged, so the queue will not deliver it again, and its outcome was never recorded", tk.ID, rec, want))
		default:
			problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want sent %s", tk.ID, rec, want))
		}
	}
	if acks == 0 {
		msg := fmt.Sprintf("%s was delivered %d times and never acknowledged", tk.ID, deliveries)
		switch {
		case len(returns) > 0 && returns[len(returns)-1] != nil:
			msg += fmt.Sprintf("; the last Process(%s) returned: %v", tk.ID, returns[len(returns)-1])
		case len(returns) > 0:
			msg += fmt.Sprintf("; the last Process(%s) returned nil without calling d.Ack", tk.ID)
		case crashes > 0:
			msg += "; every delivery ended in a crash"
		}
		problems = append(problems, msg)
	}
	return problems
}

// sendKeys returns the keys of the Sends made for taskID, without repeats,
// in order.
func (e *env) sendKeys(taskID string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, k := range e.keys[taskID] {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// crashAt returns a plan that crashes the way v says at the call matching
// target (same process, same position), and a description of it.
func crashAt(target call, v crash) (func(*env, call) crash, string) {
	plan := func(_ *env, c call) crash {
		if c.inc == target.inc && c.seq == target.seq {
			return v
		}
		return noCrash
	}
	how := "before it takes effect"
	if v == crashAfter {
		how = "right after it took effect"
	}
	return plan, fmt.Sprintf("the worker crashes at its call #%d, %s, %s", target.seq, target, how)
}

// firstCall returns a plan that crashes (or fails the call) the way v
// says at the first call for which match is true.
func firstCall(match func(c call) bool, v crash) func(*env, call) crash {
	return steps(step{match, v})
}

// step is one fault of a plan made of steps.
type step struct {
	match func(c call) bool
	act   crash
}

// steps returns a plan that injects each step once, in order: a step's act
// hits the first call, after the previous step fired, for which its match
// is true.
func steps(ss ...step) func(*env, call) crash {
	return func(e *env, c call) crash {
		if e.step < len(ss) && ss[e.step].match(c) {
			e.step++
			return ss[e.step-1].act
		}
		return noCrash
	}
}

// op matches the calls of one operation, by any process.
func op(name string) func(call) bool {
	return func(c call) bool { return c.op == name }
}

// opOf matches the calls of one operation by the n-th process.
func opOf(n int, name string) func(call) bool {
	return func(c call) bool { return c.inc == n && c.op == name }
}

// lookupOf matches the lookups (Status or Find) of the n-th process.
func lookupOf(n int) func(call) bool {
	return func(c call) bool { return c.inc == n && (c.op == "Status" || c.op == "Find") }
}

// afterCrash holds the task back for d after a crash, and for the usual
// visibility timeout otherwise.
func afterCrash(d time.Duration) func(bool) time.Duration {
	return func(crashed bool) time.Duration {
		if crashed {
			return d
		}
		return visibility
	}
}

// probe plays sc quietly and returns its env. When sc goes wrong, probe
// reports it as the case's failure and returns nil: the crash scenarios
// derived from a run that fails on its own would only repeat the failure.
func probe(t testing.TB, h *suites.History, newWorker constructor, sc *scenario) *env {
	t.Helper()
	sc.watch = caseRules(t)
	e, problems := play(suites.NewHistory(), newWorker, sc)
	if len(problems) > 0 {
		failScenario(t, h, newWorker, sc, 0, 1, problems)
		return nil
	}
	return e
}
