package ambiguoussuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
	"github.com/fourth-outcome/labkit/task"
)

// The model case. The model is what the test knows about each task from
// what it observed through the harness: the record the store holds, the
// keys the worker sent the task with, what the provider delivered under
// them, whether the queue got an acknowledgement, and whether a Send of
// the task was refused. It says what every delivery must leave behind,
// never how a worker gets there: how often a worker retries, and whether
// it looks the operation up first, are its own business (R9).

// modelTasks are groups of tasks drawn to collide: two tasks with
// identical content whose ids differ by a trailing space; the same
// document to two people, under an id that differs only in case; ids of
// invalid UTF-8 that a []rune conversion merges, with identical content;
// two tasks the provider refuses for good (a recipient that is not an
// email address, an account it does not accept); and two long ids that
// differ in their last byte, with identical content. A sequence works on
// two groups.
var modelTasks = func() [][]task.Task {
	doc := func(id, acct, docID, to string) task.Task {
		return task.Task{ID: id, Account: acct, DocumentID: docID, Recipient: to, Subject: "Please sign: " + docID}
	}
	long := strings.Repeat("t", 300)
	return [][]task.Task{
		{doc("task-1", account, "contract-7", "ann@example.com"), doc("task-1 ", account, "contract-7", "ann@example.com")},
		{doc("TASK-1", account, "contract-7", "bob@example.com"), doc("task-2", account, "nda-3", "ann@example.com")},
		{doc("task-\xff", account, "contract-9", "cem@example.com"), doc("task-\ufffd", account, "contract-9", "cem@example.com")},
		{doc("task-bad", account, "contract-8", "dee.example.com"), doc("task-globex", "globex", "contract-8", "dee@example.com")},
		{doc(long+"1", account, "contract-5", "eve@example.com"), doc(long+"2", account, "contract-5", "eve@example.com")},
	}
}()

// refusable reports whether the provider refuses tk for good (R7).
func refusable(tk task.Task) bool {
	return tk.Account != account || !strings.Contains(tk.Recipient, "@")
}

// showID quotes a task id for a message, abbreviating a long one.
func showID(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%+q… (%d bytes)", s[:12], len(s))
	}
	return strconv.QuoteToASCII(s)
}

// modelFault is the fault of one delivery: what happens to the worker's
// nth call during it, whichever call that is (pick chooses among the
// faults that call can meet), or the context cancelled at a commit.
type modelFault struct {
	nth      int // 0 for none
	pick     int
	atCommit bool // the delivery's context is cancelled at the instant the provider commits a Send
	slow     bool // the provider takes 3m to commit the worker's first Send, and the worker dies while it is on its way
}

// modelActs are the faults each call can meet ("lookup" is a Status or a
// Find).
var modelActs = map[string][]crash{
	"Load":   {crashBefore, crashAfter, failBefore, cancelBefore},
	"Save":   {crashBefore, crashAfter, failBefore, failAfter, cancelBefore},
	"Send":   {crashBefore, crashAfter, crashInFlight, failBefore, failAfter, timeoutAfter, cancelBefore},
	"lookup": {crashBefore, crashAfter, failBefore, failAfter, refuseBefore, cancelBefore},
	"Ack":    {crashBefore, crashAfter, failBefore, failAfter, cancelBefore},
}

// modelPicks is a multiple of the length of every list in modelActs, so
// that a drawn pick chooses uniformly in each.
const modelPicks = 420

var actNames = map[crash]string{
	crashBefore:   "the worker dies before it takes effect",
	crashAfter:    "it takes effect and the worker dies before it returns",
	crashInFlight: "the worker dies while it is on its way: the provider has the request",
	failBefore:    "it fails with an ordinary error, without effect",
	failAfter:     "it takes effect, then fails with an ordinary error",
	timeoutAfter:  "the provider commits it, then it fails with a 504 while ctx is alive",
	cancelBefore:  "the delivery's context is cancelled just before it",
	refuseBefore:  "the provider refuses it, 401 unauthorized, looking nothing up",
}

func (f modelFault) String() string {
	switch {
	case f.atCommit:
		return "the delivery's context is cancelled at the instant the provider commits a Send"
	case f.slow:
		return "the provider takes 3m to commit the worker's first Send, and the worker dies while the request is on its way"
	}
	return fmt.Sprintf("the worker's call #%d meets a fault", f.nth)
}

// modelProviderFaults are scripted on the provider before a delivery; each
// hits the next call it matches, of whichever task.
var modelProviderFaults = []struct {
	what  string
	fault provider.Fault
}{
	{"fails the next Send before committing (503)", provider.FailBeforeCommit().On(provider.OpSend)},
	{"commits the next Send and loses its response", provider.LoseResponse().On(provider.OpSend)},
	{"takes 3m to commit the next Send", provider.Slow(3 * time.Minute).On(provider.OpSend)},
	{"throttles its next call (Retry-After 20s)", provider.Throttle(20 * time.Second)},
	{"fails the next Find (503)", provider.FailBeforeCommit().On(provider.OpFind)},
	{"loses the response of its next call", provider.LoseResponse()},
}

// before is what the test knew of a task just before a delivery.
type before struct {
	rec     task.Record
	ok      bool
	sends   int
	acks    int
	returns int
	trace   int
}

// ambModel is the abstract state of one sequence, with the harness that
// holds what the test observed.
type ambModel struct {
	seq   *modelcheck.Seq
	h     *suites.History
	e     *env
	tasks []task.Task

	start   time.Time            // t=0s of the sequence
	lastEnd map[string]time.Time // when each task's last delivery ended
	// outageEnd is when the last outage of the provider ends.
	outageEnd time.Time
	// hijacked holds the tasks whose key another client used first.
	hijacked map[string]bool
	// The fault of the current delivery, and where it fired: the index in
	// e.trace of the call it hit (-1 while it has not), that call and what
	// it met.
	fault    modelFault
	matched  int
	firedAt  int
	firedOp  string
	firedAct crash
	// problems the harness reported so far.
	problems int
}

// plan is the scenario's crash plan: it hits the call the current
// delivery's fault names. The harness holds e.mu.
func (m *ambModel) plan(e *env, c call) crash {
	f := m.fault
	if m.firedAt >= 0 || (f.nth == 0 && !f.slow) {
		return noCrash
	}
	op := c.op
	if op == "Status" || op == "Find" {
		op = "lookup"
	}
	if f.slow {
		if op != "Send" {
			return noCrash
		}
		m.firedAt, m.firedOp, m.firedAct = len(e.trace)-1, op, crashInFlight
		return crashInFlight
	}
	m.matched++
	if m.matched < f.nth {
		return noCrash
	}
	acts := modelActs[op]
	m.firedAt, m.firedOp, m.firedAct = len(e.trace)-1, op, acts[f.pick%len(acts)]
	e.h.Record("test", fmt.Sprintf("at the worker's call #%d, %s", f.nth, c), actNames[m.firedAct])
	return m.firedAct
}

func (m *ambModel) drawFault(t *rapid.T) modelFault {
	switch rapid.IntRange(0, 9).Draw(t, "fault kind") {
	case 0, 1:
		return modelFault{}
	case 2:
		return modelFault{atCommit: true}
	case 3:
		return modelFault{slow: true}
	}
	return modelFault{nth: rapid.IntRange(1, 5).Draw(t, "nth"), pick: rapid.IntRange(0, modelPicks-1).Draw(t, "pick")}
}

// stepDeliver delivers a drawn task once, with a drawn fault and a drawn
// provider fault.
func (m *ambModel) stepDeliver(t *rapid.T) {
	tk := rapid.SampledFrom(m.tasks).Draw(t, "task")
	f := m.drawFault(t)
	pf := rapid.IntRange(-len(modelProviderFaults), len(modelProviderFaults)).Draw(t, "provider fault")
	switch {
	case pf == len(modelProviderFaults):
		// Down for longer than a delivery's deadline: a worker that
		// ignores its context keeps retrying past it (R9).
		now := time.Now()
		m.outageEnd = now.Add(25 * time.Minute)
		m.e.p.Outage(now, m.outageEnd)
	case pf >= 0:
		m.e.p.Script(modelProviderFaults[pf].fault)
		m.h.Note("the provider %s", modelProviderFaults[pf].what)
	}
	if rapid.IntRange(0, 7).Draw(t, "hijack") == 0 && tk.Account == account {
		m.hijack()
	}
	m.deliver(tk, f)
	m.e.mu.Lock()
	m.e.beforeSend = nil
	m.e.mu.Unlock()
}

// hijack makes another client of the account use the key of the worker's
// next Send first, for another document, if the worker never sent with
// that key before: the worker's Send is then refused with
// ErrParameterMismatch (R7).
func (m *ambModel) hijack() {
	e := m.e
	m.h.Note("another client of account %s is about to use the key of the worker's next Send, if it is a new one", account)
	e.mu.Lock()
	e.beforeSend = func(_ context.Context, acct, key string, _ provider.SendRequest) {
		e.mu.Lock()
		id := e.current
		used := 0
		for _, k := range e.keys[id] {
			if k == key {
				used++
			}
		}
		e.mu.Unlock()
		if used > 1 {
			return
		}
		e.h.Record("another client", fmt.Sprintf("Send(%s) for nda-9 to bob@example.com", key), "uses the key first")
		e.p.Send(context.Background(), acct, key, provider.SendRequest{DocumentID: "nda-9", Recipient: "bob@example.com", Subject: "Please sign: NDA 9"})
		// A scripted fault may hit the other client's Send instead: the
		// key is taken only if the provider committed it.
		for _, d := range e.p.Deliveries("bob@example.com") {
			if d.Key == key && d.DocumentID == "nda-9" {
				m.hijacked[id] = true
			}
		}
	}
	e.mu.Unlock()
}

// deliver hands one delivery of tk to the worker with fault f, and checks
// what it left behind.
func (m *ambModel) deliver(tk task.Task, f modelFault) {
	e := m.e
	if last, ok := m.lastEnd[tk.ID]; ok {
		// The queue brings a task back a minute after its last delivery
		// at the earliest.
		if d := time.Until(last.Add(visibility)); d > 0 {
			time.Sleep(d)
		}
	}
	if f.atCommit {
		e.p.OnCommit(func(provider.Delivery) {
			e.p.OnCommit(nil)
			e.mu.Lock()
			cancel := e.cancel
			e.mu.Unlock()
			e.h.Record("queue", "cancels the delivery's context", "right after the provider committed a request: the worker is shutting down")
			cancel()
		})
	}
	if f.slow {
		e.p.Script(provider.Slow(3 * time.Minute).On(provider.OpSend))
	}
	if f.atCommit || f.slow {
		m.h.Note("in the next delivery, %s", f)
	}
	e.mu.Lock()
	b := before{sends: len(e.keys[tk.ID]), acks: e.acks[tk.ID], returns: len(e.returns[tk.ID]), trace: len(e.trace)}
	b.rec, b.ok = e.records[tk.ID]
	// Each delivery is judged on its own: the runaway bound counts its
	// calls, and a throttle binds the calls that follow it in it.
	e.calls, e.throttled, e.refusedAt = 0, time.Time{}, 0
	m.fault, m.matched, m.firedAt, m.firedOp, m.firedAct = f, 0, -1, "", noCrash
	e.mu.Unlock()
	crashed, _, _ := e.deliver(tk)
	e.p.OnCommit(nil)
	e.mu.Lock()
	m.fault = modelFault{}
	e.mu.Unlock()
	m.lastEnd[tk.ID] = time.Now()
	m.checkDelivery(tk, b, crashed, f)
	m.checkAll()
}

// checkProblems fails the sequence on what the harness's invariants saw.
func (m *ambModel) checkProblems() {
	e := m.e
	e.mu.Lock()
	problems := slices.Clone(e.problems[m.problems:])
	var rules []string
	for kind := range e.seen {
		if r := invariants[kind]; !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	e.mu.Unlock()
	if len(problems) == 0 {
		return
	}
	slices.Sort(rules)
	if len(rules) == 0 {
		rules = []string{"R9", "R12"} // a panic, a runaway or a hung Process
	}
	m.seq.Fatalf("%s (%s)", problems[0], strings.Join(rules, ", "))
}

// checkDelivery checks what the rules say of one delivery of tk.
func (m *ambModel) checkDelivery(tk task.Task, b before, crashed bool, f modelFault) {
	m.checkProblems()
	e := m.e
	e.mu.Lock()
	rec, ok := e.records[tk.ID]
	sends := len(e.keys[tk.ID]) - b.sends
	acked := e.acks[tk.ID] > b.acks
	returned := len(e.returns[tk.ID]) > b.returns
	var ret error
	if returned {
		ret = e.returns[tk.ID][b.returns]
	}
	trace := slices.Clone(e.trace[b.trace:])
	refusedAt, refusal := e.refusedAt-b.trace, e.refusals[tk.ID]
	firedAt := m.firedAt - b.trace
	if m.firedAt < 0 {
		firedAt = -1
	}
	e.mu.Unlock()
	what := fmt.Sprintf("Process(%s)", showID(tk.ID))
	provCalls := 0
	for _, c := range trace {
		if c.op == "Send" || c.op == "Status" || c.op == "Find" {
			provCalls++
		}
	}

	// R10: a lookup that fails is no answer, and no Send follows it.
	act := m.firedAct
	if firedAt >= 0 && m.firedOp == "lookup" && (act == failBefore || act == failAfter || act == refuseBefore) {
		for _, c := range trace[firedAt+1:] {
			if c.op == "Send" {
				m.seq.Fatalf("%s sent %s right after its lookup %s failed, want no Send before a lookup answers: the earlier Send may have been committed, and after the retention window a Send with the old key is a second request (R10)", what, c.arg, trace[firedAt])
			}
			if c.op == "Status" || c.op == "Find" {
				break
			}
		}
	}

	// R13: a settled task is only acknowledged.
	if b.ok && b.rec.State != task.Pending {
		if sends > 0 {
			m.seq.Fatalf("%s of a task recorded {%s} made %s, want none: a delivery of a task whose outcome is recorded only acknowledges it (R13)", what, b.rec, plural(sends, "Send"))
		}
		if firedAt >= 0 || f.atCommit || provCalls > 0 || crashed || !returned {
			return
		}
		switch {
		case !acked:
			m.seq.Fatalf("%s of a task recorded {%s} = %v without acknowledging it, want it acknowledged: its outcome is recorded (R13)", what, b.rec, ret)
		case b.rec.State == task.Sent && ret != nil:
			m.seq.Fatalf("%s of a task recorded {%s} = %v, want nil: the task is sent (R13)", what, b.rec, ret)
		case b.rec.State == task.Failed && ret == nil:
			m.seq.Fatalf("%s of a task recorded {%s} = nil, want an error: the task was refused (R13)", what, b.rec)
		}
		return
	}

	// R7: a refusal is recorded, acknowledged and returned, never retried.
	if refusedAt <= 0 {
		return
	}
	for _, c := range trace[refusedAt:] {
		if c.op == "Send" {
			m.seq.Fatalf("%s sent %s again after the provider refused it (%v), want no further Send, with the same key or a new one: a refusal fails the same way every time (R7)", what, c.arg, refusal)
		}
	}
	if crashed || !returned || f.atCommit || firedAt >= refusedAt-1 || (firedAt >= 0 && act == cancelBefore) {
		return // a fault after the refusal may stop the worker before it records it
	}
	sentinel := refusalOf(refusal)
	switch {
	case !ok || rec.State != task.Failed || rec.Error == "":
		m.seq.Fatalf("%s after the provider refused the Send (%v): store.Load(%s) = %s, want failed with the reason (R7)", what, refusal, showID(tk.ID), describeRecord(rec, ok))
	case !acked:
		m.seq.Fatalf("%s after the provider refused the Send (%v) did not acknowledge the delivery, want it acknowledged: a task that can never succeed leaves the queue (R7)", what, refusal)
	case !errors.Is(ret, sentinel):
		m.seq.Fatalf("%s after the provider refused the Send = %v, want an error wrapping %s (R7)", what, ret, sentinelName(sentinel))
	}
}

// deliveriesOf returns what tk's customer received of tk under the keys
// tk was sent with.
func (m *ambModel) deliveriesOf(tk task.Task) []provider.Delivery {
	e := m.e
	e.mu.Lock()
	keys := slices.Clone(e.keys[tk.ID])
	e.mu.Unlock()
	var out []provider.Delivery
	for _, d := range e.deliveriesOf(tk) {
		if slices.Contains(keys, d.Key) {
			out = append(out, d)
		}
	}
	return out
}

// underKeys returns every request the provider made under the keys tk was
// sent with.
func (m *ambModel) underKeys(tk task.Task) []provider.Delivery {
	e := m.e
	e.mu.Lock()
	keys := slices.Clone(e.keys[tk.ID])
	e.mu.Unlock()
	var out []provider.Delivery
	for _, d := range e.p.AllDeliveries() {
		if d.Account == tk.Account && slices.Contains(keys, d.Key) {
			out = append(out, d)
		}
	}
	return out
}

// checkAll checks what must hold of every task at every moment.
func (m *ambModel) checkAll() {
	e := m.e
	for i, a := range m.tasks {
		ka := e.sendKeys(a.ID)
		for _, b := range m.tasks[i+1:] {
			for _, k := range e.sendKeys(b.ID) {
				if slices.Contains(ka, k) {
					m.seq.Fatalf("%s and %s were both sent with the idempotency key %s, want a different key for every task, even with identical content or ids that look alike (R5)", showID(a.ID), showID(b.ID), k)
				}
			}
		}
	}
	for _, tk := range m.tasks {
		ds := m.deliveriesOf(tk)
		e.mu.Lock()
		rec, ok := e.records[tk.ID]
		refusal := e.refusals[tk.ID]
		e.mu.Unlock()
		if len(ds) > 1 {
			var keys []string
			for _, d := range ds {
				keys = append(keys, fmt.Sprintf("%s at t=%v", d.Key, d.At.Sub(m.start).Round(time.Millisecond)))
			}
			m.seq.Fatalf("customer %s has received %s for %s (%s), want 1: they were sent with the keys %s (R1, R4, R10)", tk.Recipient, plural(len(ds), "signing request"), tk.DocumentID, showID(tk.ID), strings.Join(keys, ", "))
		}
		if !ok {
			continue
		}
		switch rec.State {
		case task.Sent:
			if m.hijacked[tk.ID] {
				// A Status of the key may answer with the other client's
				// request: any request made under the task's keys will do.
				ds = m.underKeys(tk)
			}
			if !slices.ContainsFunc(ds, func(d provider.Delivery) bool { return d.RequestID == rec.RequestID }) {
				m.seq.Fatalf("store.Load(%s) = {%s}, but the provider made no signing request %q for it: a task is recorded sent only with the receipt's RequestID (R6, R8)", showID(tk.ID), rec, rec.RequestID)
			}
		case task.Failed:
			if refusal == nil {
				m.seq.Fatalf("store.Load(%s) = {%s}, but the provider never refused a Send of it: only a refusal of a Send (ErrParameterMismatch, ErrInvalidRequest, ErrUnauthorized) is a failure; a timeout, in progress, a cancelled context or a refused lookup leaves the task pending (R8, R10)", showID(tk.ID), rec)
			}
		}
	}
}

// stepAdvance moves the clock: by a minute, an hour or days, or to a
// nanosecond before, or exactly to, the end of the provider's retention
// of the last request it committed.
func (m *ambModel) stepAdvance(t *rapid.T) {
	var d time.Duration
	switch k := rapid.IntRange(0, 4).Draw(t, "advance"); k {
	case 0, 1:
		ds := m.e.p.AllDeliveries()
		if len(ds) == 0 {
			t.SkipNow()
		}
		end := ds[len(ds)-1].At.Add(m.e.p.Retention())
		if k == 0 {
			end = end.Add(-time.Nanosecond)
		}
		d = time.Until(end)
		if d <= 0 {
			t.SkipNow()
		}
		m.h.Note("%v pass: %s the retention of the last request the provider committed ends", d, map[int]string{0: "a nanosecond before", 1: "the instant"}[k])
	default:
		d = []time.Duration{time.Hour, 25 * time.Hour, 8 * 24 * time.Hour}[k-2]
		m.h.Note("%v pass", d)
	}
	time.Sleep(d)
	m.checkAll()
}

// stepRestart kills the worker process between two deliveries: the next
// delivery goes to a new one.
func (m *ambModel) stepRestart(t *rapid.T) {
	e := m.e
	inc := e.inc
	if inc == nil || inc.isDead() {
		t.SkipNow()
	}
	inc.once.Do(func() {
		e.h.Record(inc.name, "CRASHES", "between two deliveries")
		close(inc.dead)
	})
	e.inc = nil
}

// drain delivers every task that is not settled yet, with nothing going
// wrong, until it is, and checks where every task ends: a task the
// provider accepts is sent once, recorded sent and acknowledged (R1).
func (m *ambModel) drain() {
	m.h.Note("the end: the queue delivers every task not yet settled, with nothing going wrong, until it is acknowledged")
	e := m.e
	settled := func(tk task.Task) bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		rec, ok := e.records[tk.ID]
		return ok && rec.State != task.Pending && e.acks[tk.ID] > 0
	}
	if d := time.Until(m.outageEnd); d > 0 {
		m.h.Note("the provider's outage ends in %v", d)
		time.Sleep(d)
	}
	// Every fault still scripted on the provider may cost a delivery.
	limit := maxDeliveries + e.p.PendingFaults()
	for _, tk := range m.tasks {
		for range limit {
			if settled(tk) {
				break
			}
			m.deliver(tk, modelFault{})
		}
	}
	// Requests still on their way reach the provider.
	time.Sleep(settle)
	m.checkAll()
	for _, tk := range m.tasks {
		ds := m.deliveriesOf(tk)
		e.mu.Lock()
		rec, ok := e.records[tk.ID]
		acks, deliveries := e.acks[tk.ID], e.deliveries[tk.ID]
		returns := slices.Clone(e.returns[tk.ID])
		e.mu.Unlock()
		last := "no Process call returned"
		if len(returns) > 0 {
			last = "the last Process call " + describeErr(returns[len(returns)-1])
		}
		if m.hijacked[tk.ID] {
			continue // refused or not, depending on when the other client came
		}
		if refusable(tk) {
			if len(ds) > 0 {
				m.seq.Fatalf("customer %s has received %s for %s, want none: the provider refuses it (R7)", tk.Recipient, plural(len(ds), "signing request"), showID(tk.ID))
			}
			continue
		}
		switch {
		case len(ds) == 0:
			m.seq.Fatalf("customer %s has received no signing request for %s after %d deliveries, want 1; %s (R1, R9)", tk.Recipient, showID(tk.ID), deliveries, last)
		case !ok || rec.State != task.Sent:
			m.seq.Fatalf("store.Load(%s) after %d deliveries = %s, want sent %s (R1, R6)", showID(tk.ID), deliveries, describeRecord(rec, ok), ds[0].RequestID)
		case acks == 0:
			m.seq.Fatalf("%s was delivered %d times and never acknowledged; %s (R1, R12)", showID(tk.ID), deliveries, last)
		}
	}
}

// modelRules are the rules whose invariants the harness checks on every
// call of the model case's sequences.
var modelRules = []string{"R3", "R4", "R9", "R11", "R12"}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[constructor]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 100, Steps: 20}, func(seq *modelcheck.Seq, newWorker constructor) {
		var tasks []task.Task
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(modelTasks)-1), 2, 2, rapid.ID).Draw(seq.T, "groups") {
			tasks = append(tasks, modelTasks[i]...)
		}
		m := &ambModel{seq: seq, h: seq.H, tasks: tasks, lastEnd: map[string]time.Time{}, hijacked: map[string]bool{}, firedAt: -1, start: time.Now()}
		sc := &scenario{
			name:       "model",
			tasks:      tasks,
			opts:       provider.Options{Accounts: []string{account}},
			plan:       m.plan,
			maxCrashes: 1 << 30,
			watch:      modelRules,
		}
		m.e = newEnv(seq.H, newWorker, sc)
		// A sequence that fails ends with requests still on their way
		// inside the provider: let them land before the bubble ends.
		defer time.Sleep(settle)
		seq.Repeat(map[string]func(*rapid.T){
			"deliver": m.stepDeliver,
			"advance": m.stepAdvance,
			"restart": m.stepRestart,
		})
		m.drain()
	})
}
