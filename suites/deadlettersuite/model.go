package deadlettersuite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
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
	"github.com/fourth-outcome/labkit/task"
)

// The model cases. The model is what the test knows from what it has
// observed: for each task ID, whether the task is in the queue (its place,
// its delivery count, its last error, the delivery holding it and until
// when), in the dead-letter queue (the dead letter and the instant it was
// filed), or neither; and every receipt it was handed. It says what every
// call must observe, never how a queue gets there.

// modelIDGroups are task IDs drawn to collide: case and a trailing space,
// invalid UTF-8 that a []rune conversion turns into U+FFFD (and U+FFFD
// itself), two encodings of one letter, and a NUL. A sequence works on two
// groups, so that its calls meet on the same tasks again and again.
var modelIDGroups = [][]string{
	{"t", "T", "t "},
	{"\xff", "\ufffd"},
	{"caf\u00e9", "cafe\u0301"},
	{"a", "a\x00"},
}

// modelConsumers are the consumers' names: the empty name and multi-byte
// text included.
var modelConsumers = []string{"consumer A", "consumer B", "", "consommateur é"}

// modelCauses are the failures consumers report with Nack: a wrapped
// error (its whole text is the last error), the empty text, multi-byte
// text; nil is drawn separately.
var modelCauses = []error{
	errTimeout,
	fmt.Errorf("send for signature: %w", errParse),
	errors.New(""),
	errors.New("échec ✍️ — 契約"),
}

// modelRejections are what the suite's validator says about a task it
// rejects.
var modelRejections = []error{
	errNoRecipient,
	fmt.Errorf("document 42: %w", errNoRecipient),
	errors.New("sujet illisible: é"),
}

// modelPanics are what the suite's validator panics with.
var modelPanics = []any{"index out of range [3] with length 3", errors.New("nil map"), 42}

// modelTimeouts are the visibility timeouts of the queues the sequences
// build: zero (the default, 30s), a nanosecond, ten seconds and the
// longest allowed.
var modelTimeouts = []time.Duration{0, time.Nanosecond, 10 * time.Second, task.MaxDeliveryTimeout}

// modelAdvances are how far the clock moves in one step, besides the exact
// instants around the expiries the model knows.
var modelAdvances = []time.Duration{time.Nanosecond, time.Second, 3 * 24 * time.Hour, 400 * 24 * time.Hour}

// showID quotes a task ID for a message.
func showID(s string) string { return strconv.QuoteToASCII(s) }

// modelTask builds the task an Enqueue sends: all fields set, only the
// ID, or multi-byte text.
func modelTask(id string, variant int) task.Task {
	switch variant {
	case 1:
		return task.Task{ID: id}
	case 2:
		return task.Task{ID: id, Account: "compte-é", DocumentID: "doc/ß", Recipient: "zoë@example.com", Subject: "Vertrag für Zoë ✍️ — 契約書"}
	}
	return newTask(id)
}

// verdict is what the suite's validator does with a task.
type verdict struct {
	reject error // not nil: the task is rejected with it
	panics any   // not nil: the validator panics with it
}

func (v verdict) String() string {
	switch {
	case v.reject != nil:
		return fmt.Sprintf("rejects it with %q", v.reject)
	case v.panics != nil:
		return fmt.Sprintf("panics on it with %v", v.panics)
	}
	return "accepts it"
}

// queued is a task the model knows is in the queue.
type queued struct {
	task       task.Task
	place      int // enqueue or redrive order: the lowest visible goes first
	deliveries int
	lastError  string
	receipt    task.Receipt // the delivery holding it, "" when visible
	consumer   string
	expires    time.Time
}

// parked is a dead letter the model knows is in the dead-letter queue.
type parked struct {
	dl task.DeadLetter
	at time.Time // when it was dead-lettered
	// panicked is the text a validator's panic value prints as; LastError
	// must contain it (R7), not equal dl.LastError.
	panicked string
}

// dlModel is the abstract state of one sequence.
type dlModel struct {
	seq *modelcheck.Seq
	h   *suites.History
	q   Queue

	max        int
	vt         time.Duration
	validating bool
	ids        []string

	tasks    map[string]*queued
	dead     []*parked                 // oldest first
	receipts map[string][]task.Receipt // every receipt of each task ID, oldest first
	seen     map[task.Receipt]bool
	places   int

	vmu       sync.Mutex // the validator runs in the queue's goroutines
	verdicts  map[string]verdict
	validated []string

	started []*suites.Call
}

// validate is the suite's validator: it does what the test last told it
// for the task, and notes the call.
func (m *dlModel) validate(tk task.Task) error {
	m.vmu.Lock()
	v := m.verdicts[tk.ID]
	m.validated = append(m.validated, tk.ID)
	m.vmu.Unlock()
	if v.panics != nil {
		panic(v.panics)
	}
	return v.reject
}

// call runs f in a goroutine of its own and fails the step if it does not
// return at once, or panics.
func (m *dlModel) call(what string, f func()) {
	var panicked any
	c := suites.Go(func() {
		defer func() { panicked = recover() }()
		f()
	})
	m.started = append(m.started, c)
	for i := 0; i < 50 && !c.Returned(); i++ {
		runtime.Gosched()
	}
	if !c.Settle() {
		m.h.Record("test", what, "still waiting")
		m.seq.Fatalf("%s did not return: it waits for something (a lock left locked by an earlier call, or a task to appear), want an answer at once: no method waits (R3)", what)
	}
	if panicked != nil {
		m.h.Record("test", what, fmt.Sprintf("panicked: %v", panicked))
		m.seq.Fatalf("%s panicked: %v, want an answer: a validator's panic makes the task malformed, nothing else panics (R7)", what, panicked)
	}
}

// drawCtx draws the context of a call: background, one already cancelled,
// or one past its deadline.
func drawCtx(t *rapid.T) (ctx context.Context, note string, done func()) {
	switch rapid.IntRange(0, 15).Draw(t, "context") {
	case 0:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, " with a cancelled context", cancel
	case 1:
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Nanosecond))
		return ctx, " with a context past its deadline", cancel
	}
	return context.Background(), "", func() {}
}

// settle brings the model to now: every delivery whose Expires has come
// has ended (R3), and a task whose last allowed delivery it was is
// dead-lettered at its Expires instant (R5), keeping its last error (R6).
func (m *dlModel) settle() {
	now := time.Now()
	var ended []*queued
	for _, q := range m.tasks {
		if q.receipt != "" && !now.Before(q.expires) {
			ended = append(ended, q)
		}
	}
	slices.SortFunc(ended, func(a, b *queued) int { return a.expires.Compare(b.expires) })
	for _, q := range ended {
		q.receipt = ""
		if q.deliveries >= m.max {
			m.park(q, task.ReasonMaxDeliveries, q.expires, "")
		}
	}
}

// park moves q to the dead-letter queue at the instant at.
func (m *dlModel) park(q *queued, reason task.DeadLetterReason, at time.Time, panicked string) {
	delete(m.tasks, q.task.ID)
	m.dead = append(m.dead, &parked{dl: task.DeadLetter{Task: q.task, Deliveries: q.deliveries, LastError: q.lastError, Reason: reason}, at: at, panicked: panicked})
}

func (m *dlModel) deadIndex(id string) int {
	return slices.IndexFunc(m.dead, func(p *parked) bool { return p.dl.Task.ID == id })
}

// where says where the model has a task, for messages.
func (m *dlModel) where(id string) string {
	if q, ok := m.tasks[id]; ok {
		if q.receipt != "" {
			return fmt.Sprintf("%s is being delivered (delivery %d, until t=%s)", showID(id), q.deliveries, at(q.expires))
		}
		return fmt.Sprintf("%s is waiting in the queue (%d deliveries so far)", showID(id), q.deliveries)
	}
	if m.deadIndex(id) >= 0 {
		return fmt.Sprintf("%s is in the dead-letter queue", showID(id))
	}
	return fmt.Sprintf("%s is in neither queue (never enqueued, or acknowledged)", showID(id))
}

func at(t time.Time) string { return t.Sub(fakeclock.Epoch).String() }

// ctxFailure checks what a call with a done context returned: an error
// wrapping the context's, or one of alsoOK (a call the rules refuse for
// its arguments too).
func (m *dlModel) ctxFailure(what string, ctx context.Context, err error, alsoOK ...error) {
	if errors.Is(err, ctx.Err()) {
		return
	}
	for _, e := range alsoOK {
		if errors.Is(err, e) {
			return
		}
	}
	m.seq.Fatalf("%s = %v, want an error wrapping %q, and nothing changed (R12)", what, err, ctx.Err())
}

func (m *dlModel) drawID(t *rapid.T) string {
	return rapid.SampledFrom(m.ids).Draw(t, "id")
}

func (m *dlModel) stepEnqueue(t *rapid.T) {
	id := m.drawID(t)
	if rapid.IntRange(0, 9).Draw(t, "empty ID") == 0 {
		id = ""
	}
	tk := modelTask(id, rapid.IntRange(0, 2).Draw(t, "fields"))
	ctx, note, done := drawCtx(t)
	defer done()
	m.settle()
	what := fmt.Sprintf("Enqueue(%s)", showID(id))
	var err error
	m.call(what, func() { err = m.q.Enqueue(ctx, tk) })
	m.h.Record("producer", what+note, outcome(err, "queued"))
	_, inQueue := m.tasks[id]
	switch {
	case note != "":
		if id == "" {
			m.ctxFailure(what+note, ctx, err, task.ErrNoTaskID)
		} else {
			m.ctxFailure(what+note, ctx, err)
		}
	case id == "":
		if !errors.Is(err, task.ErrNoTaskID) {
			m.seq.Fatalf("%s = %v, want an error wrapping %q and nothing queued (R2)", what, err, task.ErrNoTaskID)
		}
	case inQueue || m.deadIndex(id) >= 0:
		if !errors.Is(err, task.ErrDuplicateMessage) {
			m.seq.Fatalf("%s at t=%s = %v, want an error wrapping %q: %s (R2, and R3, R5: from its Expires instant on, an expired last delivery's task is in the dead-letter queue)", what, at(time.Now()), err, task.ErrDuplicateMessage, m.where(id))
		}
	default:
		if err != nil {
			m.seq.Fatalf("%s at t=%s = %v, want nil: %s, and an acknowledged task's ID may be enqueued again (R2; IDs are compared byte for byte)", what, at(time.Now()), err, m.where(id))
		}
		m.places++
		m.tasks[id] = &queued{task: tk, place: m.places}
	}
}

// visible returns the tasks Receive may pick now, first place first.
func (m *dlModel) visible() []*queued {
	var out []*queued
	for _, q := range m.tasks {
		if q.receipt == "" {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *queued) int { return a.place - b.place })
	return out
}

func (m *dlModel) stepReceive(t *rapid.T) {
	ctx, note, done := drawCtx(t)
	defer done()
	m.receive(t, ctx, note)
}

// stepWork is a consumer at work: it receives a task, then nacks it with
// a drawn cause, acknowledges it, or crashes and says nothing.
func (m *dlModel) stepWork(t *rapid.T) {
	msg, ok := m.receive(t, context.Background(), "")
	if !ok {
		return
	}
	which := fmt.Sprintf("%s's receipt of %s delivery %d", msg.Consumer, showID(msg.Task.ID), msg.Deliveries)
	switch rapid.IntRange(0, 2).Draw(t, "then") {
	case 0:
		m.nack(msg.Receipt, which, rapid.SampledFrom(modelCauses).Draw(t, "cause"), context.Background(), "")
	case 1:
		m.ack(msg.Receipt, which, context.Background(), "")
	default:
		m.h.Note("%s crashes: it will never acknowledge or nack", msg.Consumer)
	}
}

// receive calls Receive and checks what it returned; it reports the
// delivery, if there was one.
func (m *dlModel) receive(t *rapid.T, ctx context.Context, note string) (task.Message, bool) {
	consumer := rapid.SampledFrom(modelConsumers).Draw(t, "consumer")
	m.settle()
	m.vmu.Lock()
	m.validated = nil
	verdicts := maps.Clone(m.verdicts)
	m.vmu.Unlock()
	what := fmt.Sprintf("Receive(%q)", consumer)
	var msg task.Message
	var err error
	m.call(what, func() { msg, err = m.q.Receive(ctx, consumer) })
	m.vmu.Lock()
	validated := slices.Clone(m.validated)
	m.vmu.Unlock()
	now := time.Now()
	if err == nil {
		m.h.Recordf(consumer, what+note, "%s, invisible until t=%s", msg, at(msg.Expires))
	} else {
		m.h.Record(consumer, what+note, outcome(err, ""))
	}
	if note != "" {
		m.ctxFailure(what+note, ctx, err)
		return task.Message{}, false
	}
	// What the rules make of the visible tasks, first place first: each
	// one the validator rejects is dead-lettered, the first it accepts is
	// delivered (R3, R7).
	var want *queued
	var checked []string
	for _, q := range m.visible() {
		if !m.validating {
			want = q
			break
		}
		checked = append(checked, q.task.ID)
		v := verdicts[q.task.ID]
		switch {
		case v.reject != nil:
			q.lastError = v.reject.Error()
			m.park(q, task.ReasonMalformed, now, "")
			continue
		case v.panics != nil:
			q.lastError = fmt.Sprint(v.panics)
			m.park(q, task.ReasonMalformed, now, fmt.Sprint(v.panics))
			continue
		}
		want = q
		break
	}
	if m.validating {
		slices.Sort(checked)
		got := slices.Compact(slices.Sorted(slices.Values(validated)))
		if !slices.Equal(got, checked) {
			m.seq.Fatalf("%s called Validate on %s, want exactly %s: the visible tasks it passed on its way, first place first, up to the one it delivers, and no other (R7)", what, showIDs(got), showIDs(checked))
		}
	}
	if want == nil {
		if !errors.Is(err, task.ErrNoMessage) {
			m.seq.Fatalf("%s at t=%s = %s, want an error wrapping %q: no task is visible (R3: every task is being delivered, dead-lettered or acknowledged; R5: a task is delivered at most MaxDeliveries (%d) times; R7: a malformed task is never delivered)", what, at(now), describeReceive(msg, err), task.ErrNoMessage, m.max)
		}
		return task.Message{}, false
	}
	wantMsg := task.Message{Task: want.task, Consumer: consumer, Deliveries: want.deliveries + 1, Expires: now.Add(m.vt)}
	switch {
	case err != nil:
		m.seq.Fatalf("%s at t=%s = %v, want %s delivery %d: it is the visible task placed first (R3)", what, at(now), err, showID(want.task.ID), wantMsg.Deliveries)
	case msg.Task.ID != want.task.ID:
		m.seq.Fatalf("%s at t=%s = %s delivery %d, want %s delivery %d: %s, and the visible task enqueued or redriven earliest goes first (R3: a nacked or expired task keeps its place; R5, R7)", what, at(now), showID(msg.Task.ID), msg.Deliveries, showID(want.task.ID), wantMsg.Deliveries, m.where(msg.Task.ID))
	case msg.Deliveries != wantMsg.Deliveries:
		m.seq.Fatalf("%s = %s delivery %d, want delivery %d: each delivery counts one more than the previous one, however it ended (R4; R10: 1 after a redrive)", what, showID(msg.Task.ID), msg.Deliveries, wantMsg.Deliveries)
	case msg.Task != want.task:
		m.seq.Fatalf("%s delivered the task %+v, want it exactly as enqueued, %+v (R2)", what, msg.Task, want.task)
	case msg.Consumer != consumer:
		m.seq.Fatalf("%s delivered to consumer %q, want %q (R3)", what, msg.Consumer, consumer)
	case !msg.Expires.Equal(wantMsg.Expires):
		m.seq.Fatalf("%s at t=%s expires at t=%s, want t=%s: one visibility timeout (%v) from now (R3)", what, at(now), at(msg.Expires), at(wantMsg.Expires), m.vt)
	case m.seen[msg.Receipt]:
		m.seq.Fatalf("%s returned the receipt %q, which an earlier delivery had, want a receipt no other delivery had (R3)", what, msg.Receipt)
	}
	m.seen[msg.Receipt] = true
	want.deliveries++
	want.receipt, want.consumer, want.expires = msg.Receipt, consumer, msg.Expires
	m.receipts[want.task.ID] = append(m.receipts[want.task.ID], msg.Receipt)
	return msg, true
}

func showIDs(ids []string) string {
	if len(ids) == 0 {
		return "no task"
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = showID(id)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// drawReceipt draws the receipt an Ack or a Nack uses: the current one of
// a task being delivered, an earlier one of a task, or one the queue never
// made.
func (m *dlModel) drawReceipt(t *rapid.T) (task.Receipt, string) {
	m.settle()
	var held []*queued
	for _, q := range m.tasks {
		if q.receipt != "" {
			held = append(held, q)
		}
	}
	slices.SortFunc(held, func(a, b *queued) int { return a.place - b.place })
	switch which := rapid.IntRange(0, 7).Draw(t, "receipt"); {
	case which >= 3 && len(held) > 0:
		q := rapid.SampledFrom(held).Draw(t, "delivery")
		return q.receipt, fmt.Sprintf("%s's receipt of %s delivery %d", q.consumer, showID(q.task.ID), q.deliveries)
	case which >= 1:
		id := m.drawID(t)
		if rs := m.receipts[id]; len(rs) > 0 {
			i := rapid.IntRange(0, len(rs)-1).Draw(t, "earlier")
			return rs[i], fmt.Sprintf("receipt of %s delivery %d (of %d so far)", showID(id), i+1, len(rs))
		}
	}
	r := rapid.SampledFrom([]task.Receipt{"", "not-a-receipt"}).Draw(t, "made up")
	return r, fmt.Sprintf("made-up receipt %q", r)
}

// holder returns the task whose current delivery r is, or nil.
func (m *dlModel) holder(r task.Receipt) *queued {
	for _, q := range m.tasks {
		if r != "" && q.receipt == r {
			return q
		}
	}
	return nil
}

// staleWhy says why a receipt is not current, for messages.
func (m *dlModel) staleWhy(r task.Receipt) string {
	if !m.seen[r] {
		return "no delivery had it"
	}
	return "its delivery ended (acknowledged, nacked, or expired at its Expires instant), or its task was dead-lettered"
}

func (m *dlModel) stepAck(t *rapid.T) {
	r, which := m.drawReceipt(t)
	ctx, note, done := drawCtx(t)
	defer done()
	m.ack(r, which, ctx, note)
}

func (m *dlModel) ack(r task.Receipt, which string, ctx context.Context, note string) {
	m.settle()
	what := fmt.Sprintf("Ack(%s)", which)
	var err error
	m.call(what, func() { err = m.q.Ack(ctx, r) })
	m.h.Record("consumer", what+note, outcome(err, "acknowledged"))
	hq := m.holder(r)
	switch {
	case note != "":
		m.ctxFailure(what+note, ctx, err)
	case hq != nil:
		if err != nil {
			m.seq.Fatalf("%s at t=%s = %v, want nil: it is %s's current delivery, until t=%s (R8)", what, at(time.Now()), err, showID(hq.task.ID), at(hq.expires))
		}
		delete(m.tasks, hq.task.ID)
	default:
		if !errors.Is(err, task.ErrDeliveryLost) {
			m.seq.Fatalf("%s at t=%s = %v, want an error wrapping %q and nothing changed: %s (R8)", what, at(time.Now()), err, task.ErrDeliveryLost, m.staleWhy(r))
		}
	}
}

func (m *dlModel) stepNack(t *rapid.T) {
	r, which := m.drawReceipt(t)
	var cause error
	if rapid.IntRange(0, 7).Draw(t, "nil cause") > 0 {
		cause = rapid.SampledFrom(modelCauses).Draw(t, "cause")
	}
	ctx, note, done := drawCtx(t)
	defer done()
	m.nack(r, which, cause, ctx, note)
}

func (m *dlModel) nack(r task.Receipt, which string, cause error, ctx context.Context, note string) {
	m.settle()
	what := fmt.Sprintf("Nack(%s, %q)", which, errText(cause))
	var err error
	m.call(what, func() { err = m.q.Nack(ctx, r, cause) })
	m.h.Record("consumer", what+note, outcome(err, "nacked"))
	hq := m.holder(r)
	now := time.Now()
	switch {
	case note != "":
		if cause == nil {
			m.ctxFailure(what+note, ctx, err, task.ErrNoCause)
		} else {
			m.ctxFailure(what+note, ctx, err)
		}
	case cause == nil:
		ok := errors.Is(err, task.ErrNoCause) || (hq == nil && errors.Is(err, task.ErrDeliveryLost))
		if !ok {
			m.seq.Fatalf("%s = %v, want an error wrapping %q and nothing changed (R8)", what, err, task.ErrNoCause)
		}
	case hq != nil:
		if err != nil {
			m.seq.Fatalf("%s at t=%s = %v, want nil: it is %s's current delivery, until t=%s (R8)", what, at(now), err, showID(hq.task.ID), at(hq.expires))
		}
		hq.lastError, hq.receipt = cause.Error(), ""
		if hq.deliveries >= m.max {
			m.park(hq, task.ReasonMaxDeliveries, now, "")
		}
	default:
		if !errors.Is(err, task.ErrDeliveryLost) {
			m.seq.Fatalf("%s at t=%s = %v, want an error wrapping %q and nothing changed, the last error included: %s (R8)", what, at(now), err, task.ErrDeliveryLost, m.staleWhy(r))
		}
	}
}

func (m *dlModel) stepList(t *rapid.T) {
	ctx, note, done := drawCtx(t)
	defer done()
	m.list(ctx, note)
}

func (m *dlModel) list(ctx context.Context, note string) {
	m.settle()
	what := "List()"
	var dl []task.DeadLetter
	var err error
	m.call(what, func() { dl, err = m.q.List(ctx) })
	if err != nil {
		m.h.Record("operator", what+note, outcome(err, ""))
	} else {
		m.h.Record("operator", what+note, describeDeadLetters(dl))
	}
	if note != "" {
		m.ctxFailure(what+note, ctx, err)
		return
	}
	if err != nil {
		m.seq.Fatalf("%s = %v, want the dead letters (R9)", what, err)
	}
	if msg := m.compareList(dl); msg != "" {
		m.seq.Fatalf("%s at t=%s = %s, want %s: %s", what, at(time.Now()), describeDeadLetters(dl), m.describeDead(), msg)
	}
	// The caller owns what List returned (R9).
	for i := range dl {
		dl[i].Task.ID += " (changed by the caller)"
		dl[i].Deliveries, dl[i].LastError, dl[i].Reason = -1, "changed by the caller", "changed"
	}
	if len(dl) > 0 {
		m.h.Note("the operator changes every dead letter List() returned (its copy)")
	}
}

// describeDead describes the dead letters the model expects.
func (m *dlModel) describeDead() string {
	if len(m.dead) == 0 {
		return "none"
	}
	var parts []string
	for _, p := range m.dead {
		s := p.dl.String()
		if p.panicked != "" {
			s = fmt.Sprintf("%s after %d deliveries (%s, last error containing %q)", p.dl.Task.ID, p.dl.Deliveries, p.dl.Reason, p.panicked)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// compareList compares a List with the dead letters the model expects,
// oldest first; dead letters filed at the same instant may come in either
// order (R9). It returns why they differ, or "".
func (m *dlModel) compareList(got []task.DeadLetter) string {
	gotIDs := make([]string, len(got))
	for i, d := range got {
		gotIDs[i] = d.Task.ID
	}
	wantIDs := make([]string, len(m.dead))
	for i, p := range m.dead {
		wantIDs[i] = p.dl.Task.ID
	}
	if !slices.Equal(slices.Sorted(slices.Values(gotIDs)), slices.Sorted(slices.Values(wantIDs))) {
		return "every dead letter, once, for as long as it is not redriven (R5: an expired last delivery is dead-lettered at its Expires instant, whoever looks; R7; R9; R10; R11: a task in exactly one of the two queues)"
	}
	for i := 0; i < len(m.dead); {
		j := i
		for j < len(m.dead) && m.dead[j].at.Equal(m.dead[i].at) {
			j++
		}
		group := m.dead[i:j]
		for k := i; k < j; k++ {
			g := got[k]
			n := slices.IndexFunc(group, func(p *parked) bool { return p.dl.Task.ID == g.Task.ID })
			if n < 0 {
				return "oldest first, in the order they were dead-lettered (R9)"
			}
			p := group[n]
			switch {
			case g.Task != p.dl.Task:
				return fmt.Sprintf("the task %+v exactly as enqueued, not %+v (R6)", p.dl.Task, g.Task)
			case g.Deliveries != p.dl.Deliveries:
				return fmt.Sprintf("%s with %d deliveries, the number since it was enqueued or redriven (R6; R7: a rejection counts no delivery; R10)", showID(g.Task.ID), p.dl.Deliveries)
			case g.Reason != p.dl.Reason:
				return fmt.Sprintf("%s with reason %q (R5, R7)", showID(g.Task.ID), p.dl.Reason)
			case p.panicked != "" && !strings.Contains(g.LastError, p.panicked):
				return fmt.Sprintf("%s with a last error containing the validator's panic value %q (R7)", showID(g.Task.ID), p.panicked)
			case p.panicked == "" && g.LastError != p.dl.LastError:
				return fmt.Sprintf("%s with last error %q: the exact text of the last failure recorded, a Nack's cause or the validator's error, kept through crashes, forgotten by a redrive (R6, R7, R8: a refused Nack records nothing; R10)", showID(g.Task.ID), p.dl.LastError)
			}
		}
		i = j
	}
	return ""
}

func (m *dlModel) stepRedrive(t *rapid.T) {
	m.settle()
	id := m.drawID(t)
	switch k := rapid.IntRange(0, 9).Draw(t, "which ID"); {
	case k == 0:
		id = ""
	case k >= 4 && len(m.dead) > 0:
		id = rapid.SampledFrom(m.dead).Draw(t, "dead letter").dl.Task.ID
	}
	ctx, note, done := drawCtx(t)
	defer done()
	m.settle()
	what := fmt.Sprintf("Redrive(%s)", showID(id))
	var err error
	m.call(what, func() { err = m.q.Redrive(ctx, id) })
	m.h.Record("operator", what+note, outcome(err, "back in the queue"))
	i := m.deadIndex(id)
	switch {
	case note != "":
		m.ctxFailure(what+note, ctx, err)
	case i >= 0:
		if err != nil {
			m.seq.Fatalf("%s at t=%s = %v, want nil: %s (R10)", what, at(time.Now()), err, m.where(id))
		}
		p := m.dead[i]
		m.dead = slices.Delete(m.dead, i, i+1)
		m.places++
		m.tasks[id] = &queued{task: p.dl.Task, place: m.places}
	default:
		if !errors.Is(err, task.ErrNotDeadLettered) {
			m.seq.Fatalf("%s at t=%s = %v, want an error wrapping %q: %s (R10)", what, at(time.Now()), err, task.ErrNotDeadLettered, m.where(id))
		}
	}
}

// stepJudge changes what the validator does with a task from now on.
func (m *dlModel) stepJudge(t *rapid.T) {
	if !m.validating {
		t.SkipNow()
	}
	id := m.drawID(t)
	var v verdict
	switch rapid.IntRange(0, 2).Draw(t, "verdict") {
	case 1:
		v.reject = rapid.SampledFrom(modelRejections).Draw(t, "rejection")
	case 2:
		v.panics = rapid.SampledFrom(modelPanics).Draw(t, "panic")
	}
	m.vmu.Lock()
	m.verdicts[id] = v
	m.vmu.Unlock()
	m.h.Note("from now on the validator %s for %s", v, showID(id))
}

// stepAdvance moves the clock: to a nanosecond before or exactly at an
// expiry the model knows, or by a drawn duration.
func (m *dlModel) stepAdvance(t *rapid.T) {
	now := time.Now()
	var targets []time.Duration
	for _, q := range m.tasks {
		if d := q.expires.Sub(now); q.receipt != "" && d > 0 {
			targets = append(targets, d-time.Nanosecond, d)
		}
	}
	slices.Sort(targets)
	targets = slices.DeleteFunc(slices.Compact(targets), func(d time.Duration) bool { return d <= 0 })
	d := rapid.SampledFrom(append(targets, modelAdvances...)).Draw(t, "advance")
	fakeclock.Advance(d)
	m.h.Note("%v pass: now t=%s; consumers holding deliveries say nothing (they may have crashed)", d, at(time.Now()))
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 60, Steps: 50}, func(seq *modelcheck.Seq, tg *target) {
		m := &dlModel{seq: seq, h: seq.H, tasks: map[string]*queued{}, receipts: map[string][]task.Receipt{},
			seen: map[task.Receipt]bool{}, verdicts: map[string]verdict{}}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(modelIDGroups)-1), 2, 2, rapid.ID).Draw(seq.T, "groups") {
			m.ids = append(m.ids, modelIDGroups[i]...)
		}
		opts := task.DeadLetterOptions{
			MaxDeliveries:     rapid.SampledFrom([]int{0, 1, 1, 2, 2, 3}).Draw(seq.T, "MaxDeliveries"),
			VisibilityTimeout: rapid.SampledFrom(modelTimeouts).Draw(seq.T, "VisibilityTimeout"),
		}
		m.validating = rapid.IntRange(0, 3).Draw(seq.T, "no validator") > 0
		if m.validating {
			opts.Validate = m.validate
		}
		m.max, m.vt = cmp.Or(opts.MaxDeliveries, task.DefaultMaxDeliveries), cmp.Or(opts.VisibilityTimeout, task.DefaultDeliveryTimeout)
		b := suites.Construct(func() built {
			q, err := tg.build(opts)
			return built{q, err}
		})
		if b.err != nil {
			seq.Fatalf("New(%s) = %v, want a queue (R1)", describeOptions(opts), b.err)
		}
		m.q = b.q
		seq.H.Record("test", "New("+describeOptions(opts)+")", fmt.Sprintf("a new queue: at most %d deliveries, each hiding its task for %v", m.max, m.vt))
		defer func() {
			for _, c := range m.started {
				c.Settle()
			}
		}()
		seq.Repeat(map[string]func(*rapid.T){
			"enqueue": m.stepEnqueue,
			"receive": m.stepReceive,
			"work":    m.stepWork,
			"ack":     m.stepAck,
			"nack":    m.stepNack,
			"list":    m.stepList,
			"redrive": m.stepRedrive,
			"judge":   m.stepJudge,
			"advance": m.stepAdvance,
		})
		// The operator looks at the dead-letter queue once more, at the end.
		m.list(context.Background(), "")
	})
}

// built is what New returned.
type built struct {
	q   Queue
	err error
}

// The concurrent model. Every call is one operation of the history, on the
// whole queue (a Receive may pass over every task, so the history is not
// split by task), except a Receive, which is also one operation per task
// it validates: the pick (from the Receive's call, or the end of its
// previous validation, to the validator's start: the task is the first
// visible one, and is reserved) and the verdict (from the validator's
// return to the Receive's: a rejected task is dead-lettered, an accepted
// one stays reserved for this Receive). R11 lets a queue run the validator
// outside its lock on a reserved task, which other Receives pass over, so
// a Receive that delivers a task must have validated it, and one that
// finds nothing must find every waiting task delivered or reserved. An
// Enqueue takes an ID in neither queue; an Ack or a Nack acts only with the
// receipt of a task's current delivery; a Nack of the last allowed
// delivery dead-letters the task; a Redrive takes a dead letter back, with
// a fresh count; a List sees every dead letter. The clock does not move,
// so every dead letter is filed at the same instant and List's order is
// not checked here (R9 allows either order then).

type linKind int

const (
	linEnqueue linKind = iota
	linReceive
	linPick
	linVerdict
	linAck
	linNack
	linList
	linRedrive
)

// linIDs are the tasks of a round: the validator rejects "bad".
var linIDs = []string{"a", "b", "bad"}

// linRejection is the validator's error text for "bad".
var linRejection = fmt.Errorf("bad: %w", errNoRecipient).Error()

type linInput struct {
	kind    linKind
	id      string       // enqueue, redrive, pick, verdict
	receipt task.Receipt // ack, nack
	cause   string       // nack
	max     int          // the queue's MaxDeliveries
	// receive, pick, verdict: the Receive's number in the round, or -1 for
	// a validation no Receive can be told apart for (the validator ran
	// in a goroutine of the queue's own).
	receive int
}

type linOutput struct {
	ok         bool         // enqueue, ack, nack, redrive: done; receive: a delivery
	id         string       // receive
	deliveries int          // receive
	receipt    task.Receipt // receive
	list       string       // list: the dead letters, by ID
}

// linTask is one task's state: in neither queue; in the queue (its place,
// its count, the receipt of the delivery holding it, or the Receive
// validating it); or in the dead-letter queue (its count, last error and
// reason).
type linTask struct {
	where      int8 // 0 neither, 1 the queue, 2 the dead-letter queue
	place      int8
	deliveries int8
	receipt    task.Receipt
	reserved   bool  // a Receive is validating it, or has validated it
	accepted   bool  // the validator accepted it for that Receive
	by         int16 // that Receive's number, or -1
	lastError  string
	reason     task.DeadLetterReason
}

type linState struct {
	tasks [3]linTask // by index in linIDs
	next  int8
}

// linDeadLetters renders the dead letters of s, by ID, as a List's output
// is rendered.
func linDeadLetters(s linState) string {
	var b strings.Builder
	for i, tk := range s.tasks {
		if tk.where == 2 {
			fmt.Fprintf(&b, "%s after %d deliveries (%s, last error %q); ", linIDs[i], tk.deliveries, tk.reason, tk.lastError)
		}
	}
	return b.String()
}

// listOutput renders a List's dead letters, by ID.
func listOutput(dl []task.DeadLetter) string {
	sorted := slices.Clone(dl)
	slices.SortFunc(sorted, func(a, b task.DeadLetter) int { return strings.Compare(a.Task.ID, b.Task.ID) })
	var b strings.Builder
	for _, d := range sorted {
		fmt.Fprintf(&b, "%s after %d deliveries (%s, last error %q); ", d.Task.ID, d.Deliveries, d.Reason, d.LastError)
	}
	return b.String()
}

// firstVisible returns the index of the waiting task placed first that no
// delivery holds and no Receive has reserved, or -1.
func firstVisible(s linState) int {
	first := -1
	for j, tk := range s.tasks {
		if tk.where == 1 && tk.receipt == "" && !tk.reserved && (first < 0 || tk.place < s.tasks[first].place) {
			first = j
		}
	}
	return first
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		i := slices.Index(linIDs, in.id)
		switch in.kind {
		case linEnqueue:
			if s.tasks[i].where != 0 {
				return !out.ok, s
			}
			if !out.ok {
				return false, s
			}
			s.next++
			s.tasks[i] = linTask{where: 1, place: s.next}
			return true, s
		case linRedrive:
			if s.tasks[i].where != 2 {
				return !out.ok, s
			}
			if !out.ok {
				return false, s
			}
			s.next++
			s.tasks[i] = linTask{where: 1, place: s.next}
			return true, s
		case linPick:
			if firstVisible(s) != i {
				return false, s
			}
			s.tasks[i].reserved, s.tasks[i].by = true, int16(in.receive)
			return true, s
		case linVerdict:
			tk := s.tasks[i]
			if tk.where != 1 || !tk.reserved || tk.accepted || tk.by != int16(in.receive) {
				return false, s
			}
			if in.id == "bad" {
				s.tasks[i] = linTask{where: 2, deliveries: tk.deliveries, lastError: linRejection, reason: task.ReasonMalformed}
			} else {
				s.tasks[i].accepted = true
			}
			return true, s
		case linReceive:
			if !out.ok {
				return firstVisible(s) < 0, s
			}
			j := slices.Index(linIDs, out.id)
			tk := s.tasks[j]
			if j < 0 || !tk.accepted || (tk.by != int16(in.receive) && tk.by != -1) || out.deliveries != int(tk.deliveries)+1 {
				return false, s
			}
			s.tasks[j].deliveries++
			s.tasks[j].receipt = out.receipt
			s.tasks[j].reserved, s.tasks[j].accepted, s.tasks[j].by = false, false, 0
			return true, s
		case linAck, linNack:
			h := slices.IndexFunc(s.tasks[:], func(tk linTask) bool { return tk.where == 1 && tk.receipt != "" && tk.receipt == in.receipt })
			if h < 0 {
				return !out.ok, s
			}
			if !out.ok {
				return false, s
			}
			if in.kind == linAck {
				s.tasks[h] = linTask{}
				return true, s
			}
			s.tasks[h].receipt, s.tasks[h].lastError = "", in.cause
			if int(s.tasks[h].deliveries) >= in.max {
				s.tasks[h].where, s.tasks[h].reason = 2, task.ReasonMaxDeliveries
			}
			return true, s
		}
		return out.list == linDeadLetters(s), s
	},
}

// yieldingCause is a Nack's cause whose Error method yields the processor
// before it answers, which widens any gap a queue leaves open while it
// reads the text.
type yieldingCause struct{ text string }

func (c yieldingCause) Error() string {
	for range 3 {
		runtime.Gosched()
	}
	return c.text
}

// linPlan is one call a client makes in a round; a Receive that gets a
// delivery is followed by its Ack, or its Nack.
type linPlan struct {
	kind linKind
	id   string
	nack bool
}

const (
	linRounds  = 30
	linClients = 4
	linCalls   = 5
)

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		max := 1 + rng.IntN(2)
		plans := make([][]linPlan, linClients)
		for c := range plans {
			for range linCalls {
				p := linPlan{id: linIDs[rng.IntN(len(linIDs))], nack: rng.IntN(3) > 0}
				switch k := rng.IntN(20); {
				case k < 6:
					p.kind = linEnqueue
				case k < 13:
					p.kind = linReceive
				case k < 16:
					p.kind = linList
				default:
					p.kind = linRedrive
				}
				plans[c] = append(plans[c], p)
			}
		}
		var rec modelcheck.Recorder
		var odd oddAnswers
		r := &linRound{rec: &rec, odd: &odd, max: max, receipts: map[task.Receipt]bool{}}
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, tg *target) {
			r.t = t
			opts := task.DeadLetterOptions{MaxDeliveries: max, Validate: r.validate}
			q, err := suites.Construct(func() built {
				q, err := tg.build(opts)
				return built{q, err}
			}).unpack()
			if err != nil {
				t.Errorf("New(%s) = %v, want a queue (R1)", describeOptions(opts), err)
				return
			}
			r.q = q
			r.clients = make([]*linClient, linClients)
			for c := range r.clients {
				r.clients[c] = &linClient{n: c}
			}
			// Two tasks are waiting when the clients start.
			setup := &linClient{n: 0}
			for _, id := range []string{"a", "bad"} {
				r.do(setup, linPlan{kind: linEnqueue, id: id})
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, plan := range plans {
				wg.Go(func() {
					cl := r.clients[c]
					r.gids.Store(goroutineID(), cl)
					<-start
					for _, p := range plan {
						r.do(cl, p)
					}
				})
			}
			close(start)
			wg.Wait()
		})
		if t.Failed() {
			return
		}
		r.unattributed()
		if msg := odd.first(); msg != "" {
			t.Errorf("%s", msg)
			return
		}
		histories = append(histories, rec.Ops())
	}
	modelcheck.Linearizable(t, h, linModel, nil, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

func (b built) unpack() (Queue, error) { return b.q, b.err }

// goroutineID returns the calling goroutine's ID.
func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	s := strings.TrimPrefix(string(buf[:n]), "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		id, _ := strconv.ParseInt(s[:i], 10, 64)
		return id
	}
	return -1
}

// oddAnswers collects answers that no state of the queue allows, whatever
// the interleaving: they fail a round without a history, and the one
// reported (the least) is the same on every run.
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

// validation is one call of the validator: on which task, and the logical
// times of its start and its return.
type validation struct {
	id         string
	start, end int64
}

// linClient is one client of a round. Only its own goroutine touches it,
// the validator included when the queue runs it in the caller's
// goroutine.
type linClient struct {
	n           int
	validations []validation // those of the Receive in progress
}

// linRound is one round's queue and what its clients saw.
type linRound struct {
	t       *testing.T
	q       Queue
	rec     *modelcheck.Recorder
	odd     *oddAnswers
	max     int
	clients []*linClient
	gids    sync.Map // goroutine ID -> *linClient

	mu       sync.Mutex
	receipts map[task.Receipt]bool // every receipt handed out
	receives []span                // every Receive: its number and times
	stray    []validation          // validations in goroutines of the queue's own
}

// span is one Receive's number and the logical times of its call and
// return.
type span struct {
	n         int
	call, ret int64
}

// validate is a round's validator: it yields the processor, which widens
// any gap a queue leaves open while it validates, rejects "bad", and
// notes the call for the Receive of the goroutine it runs in.
func (r *linRound) validate(tk task.Task) error {
	v := validation{id: tk.ID, start: r.rec.Now()}
	for range 3 {
		runtime.Gosched()
	}
	var err error
	if tk.ID == "bad" {
		err = fmt.Errorf("%s: %w", tk.ID, errNoRecipient)
	}
	v.end = r.rec.Now()
	if c, ok := r.gids.Load(goroutineID()); ok {
		cl := c.(*linClient)
		cl.validations = append(cl.validations, v)
	} else {
		r.mu.Lock()
		r.stray = append(r.stray, v)
		r.mu.Unlock()
	}
	return err
}

// unattributed records the validations that ran in goroutines of the
// queue's own, where the test cannot tell which Receive made them: each
// is a pick and a verdict for any of the Receives that ran all through it.
func (r *linRound) unattributed() {
	for _, v := range r.stray {
		first, last := int64(-1), int64(-1)
		for _, s := range r.receives {
			if s.call < v.start && s.ret > v.end {
				if first < 0 || s.call < first {
					first = s.call
				}
				last = max(last, s.ret)
			}
		}
		if first < 0 {
			r.odd.add(fmt.Sprintf("Validate(%s) was called while no Receive was running, want it called only by Receive, on the task it is about to deliver (R7)", v.id))
			continue
		}
		r.rec.Add(modelcheck.Op{Client: 0, Call: first, Return: v.start, Input: linInput{kind: linPick, id: v.id, receive: -1}, Output: linOutput{},
			Action: "a Receive looks for the first visible task", Outcome: "it reserves " + v.id + " and calls Validate(" + v.id + ")"})
		r.rec.Add(modelcheck.Op{Client: 0, Call: v.end, Return: last, Input: linInput{kind: linVerdict, id: v.id, receive: -1}, Output: linOutput{},
			Action: "Validate(" + v.id + ") returns", Outcome: "the Receive has acted on the verdict on " + v.id})
	}
}

// add records one operation.
func (r *linRound) add(client int, call, ret int64, in linInput, out linOutput, action, outcome string) {
	in.max = r.max
	r.rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: out, Action: "calls " + action, Outcome: action + " " + outcome})
}

// do makes one planned call (a Receive and, if it delivered, the Ack or
// Nack) and records it.
func (r *linRound) do(cl *linClient, p linPlan) {
	ctx := context.Background()
	client := cl.n
	switch p.kind {
	case linEnqueue, linRedrive:
		what := fmt.Sprintf("Enqueue(%s)", p.id)
		want := task.ErrDuplicateMessage
		call := r.rec.Now()
		var err error
		if p.kind == linEnqueue {
			suites.Guard(r.t, func() { err = r.q.Enqueue(ctx, newTask(p.id)) })
		} else {
			what, want = fmt.Sprintf("Redrive(%s)", p.id), task.ErrNotDeadLettered
			suites.Guard(r.t, func() { err = r.q.Redrive(ctx, p.id) })
		}
		ret := r.rec.Now()
		if err != nil && !errors.Is(err, want) {
			r.odd.add(fmt.Sprintf("%s = %v, want nil or an error wrapping %q (R2, R10)", what, err, want))
			return
		}
		r.add(client, call, ret, linInput{kind: p.kind, id: p.id}, linOutput{ok: err == nil}, what, outcome(err, "done"))
	case linList:
		call := r.rec.Now()
		var dl []task.DeadLetter
		var err error
		suites.Guard(r.t, func() { dl, err = r.q.List(ctx) })
		ret := r.rec.Now()
		if err != nil {
			r.odd.add(fmt.Sprintf("List() = %v, want the dead letters (R9)", err))
			return
		}
		for _, d := range dl {
			if d.Task != newTask(d.Task.ID) {
				r.odd.add(fmt.Sprintf("List() has the task %+v, want it exactly as enqueued (R6)", d.Task))
				return
			}
		}
		r.add(client, call, ret, linInput{kind: linList}, linOutput{list: listOutput(dl)}, "List()", describeDeadLetters(dl))
	case linReceive:
		r.receive(cl, p)
	}
}

// receive makes one Receive and records it, with a pick and a verdict for
// every task it validated; a delivery is then acknowledged or nacked.
func (r *linRound) receive(cl *linClient, p linPlan) {
	ctx := context.Background()
	consumer := fmt.Sprintf("client %d", cl.n+1)
	cl.validations = nil
	call := r.rec.Now()
	var m task.Message
	var err error
	suites.Guard(r.t, func() { m, err = r.q.Receive(ctx, consumer) })
	ret := r.rec.Now()
	r.mu.Lock()
	n := len(r.receives)
	r.receives = append(r.receives, span{n: n, call: call, ret: ret})
	r.mu.Unlock()
	what := "Receive()"
	switch {
	case err != nil && !errors.Is(err, task.ErrNoMessage):
		r.odd.add(fmt.Sprintf("%s = %v, want a delivery or an error wrapping %q (R3)", what, err, task.ErrNoMessage))
		return
	case err == nil && (m.Task != newTask(m.Task.ID) || m.Consumer != consumer):
		r.odd.add(fmt.Sprintf("%s = %+v, want the task exactly as enqueued, delivered to %q (R2, R3)", what, m, consumer))
		return
	case err == nil && !m.Expires.Equal(time.Now().Add(task.DefaultDeliveryTimeout)):
		r.odd.add(fmt.Sprintf("%s = %s expiring in %v, want the visibility timeout, %v (R3)", what, m, time.Until(m.Expires), task.DefaultDeliveryTimeout))
		return
	}
	// Every task this Receive validated but the last was rejected, and
	// the last is the one it delivered, if it delivered one (R7).
	vs := cl.validations
	for k, v := range vs {
		rejected := v.id == "bad"
		if k == len(vs)-1 && err == nil {
			if rejected || v.id != m.Task.ID {
				r.odd.add(fmt.Sprintf("%s delivered %s after validating %s last, want the task it delivers validated, and accepted, right before (R7)", what, m.Task.ID, v.id))
				return
			}
			continue
		}
		if !rejected {
			r.odd.add(fmt.Sprintf("%s validated %s, which the validator accepts, and then %s, want Validate called on the task it is about to deliver and on no other (R7)", what, v.id, outcome(err, "delivered "+m.Task.ID)))
			return
		}
	}
	what = fmt.Sprintf("Receive() (call %d)", n+1)
	last := call
	if len(vs) > 0 {
		last = vs[len(vs)-1].end
	}
	switch {
	case err != nil && len(vs) > 0:
		r.rec.Add(modelcheck.Op{Client: cl.n, Call: last, Return: ret, Input: linInput{kind: linReceive, receive: n, max: r.max}, Output: linOutput{},
			Action: what + " looks for the next visible task", Outcome: what + " " + outcome(err, "")})
	case err != nil:
		r.add(cl.n, call, ret, linInput{kind: linReceive, receive: n}, linOutput{}, what, outcome(err, ""))
	default:
		r.mu.Lock()
		again := r.receipts[m.Receipt]
		r.receipts[m.Receipt] = true
		r.mu.Unlock()
		if again {
			r.odd.add(fmt.Sprintf("Receive() = %s with the receipt %q of an earlier delivery, want a receipt no other delivery had (R3)", m, m.Receipt))
			return
		}
		in := linInput{kind: linReceive, receive: n}
		if len(vs) == 0 {
			in.receive = -1 // the validator ran elsewhere: any validation of the task may be this Receive's
		}
		r.add(cl.n, call, ret, in, linOutput{ok: true, id: m.Task.ID, deliveries: m.Deliveries, receipt: m.Receipt}, what, m.String())
	}
	prev := call
	for k, v := range vs {
		verdict := "nil"
		if v.id == "bad" {
			verdict = linRejection
		}
		looks := what + " looks for the first visible task"
		if k == 0 && err != nil {
			looks = "calls " + what + ", which looks for the first visible task"
		}
		r.rec.Add(modelcheck.Op{Client: cl.n, Call: prev, Return: v.start, Input: linInput{kind: linPick, id: v.id, receive: n}, Output: linOutput{},
			Action: looks, Outcome: fmt.Sprintf("%s reserves %s and calls Validate(%s)", what, v.id, v.id)})
		r.rec.Add(modelcheck.Op{Client: cl.n, Call: v.end, Return: ret, Input: linInput{kind: linVerdict, id: v.id, receive: n}, Output: linOutput{},
			Action: fmt.Sprintf("Validate(%s) returns %s", v.id, verdict), Outcome: fmt.Sprintf("%s has acted on the verdict on %s", what, v.id)})
		prev = v.end
	}
	if err != nil {
		return
	}
	r.settle(cl.n, m, p.nack)
}

// settle acknowledges or nacks a delivery, and records it.
func (r *linRound) settle(client int, m task.Message, nack bool) {
	ctx := context.Background()
	what := fmt.Sprintf("Ack(%s delivery %d)", m.Task.ID, m.Deliveries)
	in := linInput{kind: linAck, receipt: m.Receipt}
	var cause yieldingCause
	if nack {
		cause = yieldingCause{text: fmt.Sprintf("client %d failed", client+1)}
		what = fmt.Sprintf("Nack(%s delivery %d, %q)", m.Task.ID, m.Deliveries, cause.text)
		in = linInput{kind: linNack, receipt: m.Receipt, cause: cause.text}
	}
	call := r.rec.Now()
	var err error
	suites.Guard(r.t, func() {
		if nack {
			err = r.q.Nack(ctx, m.Receipt, cause)
		} else {
			err = r.q.Ack(ctx, m.Receipt)
		}
	})
	ret := r.rec.Now()
	if err != nil && !errors.Is(err, task.ErrDeliveryLost) {
		r.odd.add(fmt.Sprintf("%s = %v, want nil or an error wrapping %q (R8)", what, err, task.ErrDeliveryLost))
		return
	}
	r.add(client, call, ret, in, linOutput{ok: err == nil}, what, outcome(err, "done"))
}
