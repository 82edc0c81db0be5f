package leasesuite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// target is what every case is handed: the lab's two constructors, the
// case's history, and the names the timeline gives lease tokens.
type target struct {
	h         *suites.History
	start     time.Time // the case's t=0s
	tokens    *tokenNames
	refTokens atomic.Int64 // the suite's queues' tokens, unique in the case
	newQueue  func(task.QueueOptions) (Queue, error)
	newWorker func(task.LeaseQueue, task.WorkerOptions, task.Handler) Runner
}

func newTarget(_ *testing.T, h *suites.History, newQueue func(task.QueueOptions) (Queue, error), newWorker func(task.LeaseQueue, task.WorkerOptions, task.Handler) Runner) *target {
	return &target{h: h, start: time.Now(), tokens: &tokenNames{byToken: map[task.LeaseToken]string{}}, newQueue: newQueue, newWorker: newWorker}
}

// build calls the student's New inside the case's bubble, so that
// goroutines the queue starts are its own background (see
// suites.Construct).
func (s *target) build(opts task.QueueOptions) (Queue, error) {
	type built struct {
		q   Queue
		err error
	}
	b := suites.Construct(func() built {
		q, err := s.newQueue(opts)
		return built{q, err}
	})
	return b.q, b.err
}

// at renders an instant as the timeline's "t=1m30s".
func (s *target) at(when time.Time) string {
	return "t=" + when.Sub(s.start).String()
}

// now is the case's virtual time so far.
func (s *target) now() time.Duration { return time.Since(s.start) }

// tokenNames gives the opaque tokens short names in order of appearance
// (T1, T2, ...), so that timelines read the same on every run whatever the
// queue's tokens look like.
type tokenNames struct {
	mu      sync.Mutex
	byToken map[task.LeaseToken]string
}

func (n *tokenNames) name(tok task.LeaseToken) string {
	if tok == "" {
		return `token ""`
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if s, ok := n.byToken[tok]; ok {
		return s
	}
	s := fmt.Sprintf("T%d", len(n.byToken)+1)
	n.byToken[tok] = s
	return s
}

// describe renders a lease for the timeline: "task-1 attempt 1, token T1,
// until t=30s".
func (s *target) describe(l task.Lease) string {
	return fmt.Sprintf("%s to %s attempt %d, token %s, until %s", l.Task.ID, l.Holder, l.Attempt, s.tokens.name(l.Token), s.at(l.Expires))
}

// outcome renders an error for the timeline, naming the lab's sentinels.
func outcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, task.ErrLeaseLost):
		return "refused: lease lost (" + err.Error() + ")"
	case errors.Is(err, task.ErrNoTask):
		return "no visible task"
	default:
		return "error: " + err.Error()
	}
}

// observed wraps the student's queue: every call a case makes goes through
// it and lands in the timeline.
type observed struct {
	*target
	q Queue
}

// queue builds the student's queue with the given visibility timeout, or
// ends the case.
func (s *target) queue(t *testing.T, visibility time.Duration) *observed {
	t.Helper()
	opts := task.QueueOptions{VisibilityTimeout: visibility}
	q, err := s.build(opts)
	if err != nil {
		t.Fatalf("New(%+v) = %v, want a queue", opts, err)
	}
	s.h.Recordf("test", "New", "queue with visibility timeout %v", visibility)
	return &observed{target: s, q: q}
}

// enqueue adds tasks with the given ids, or ends the case.
func (o *observed) enqueue(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := o.q.Enqueue(context.Background(), task.Task{ID: id, DocumentID: "doc-" + id}); err != nil {
			o.h.Record("producer", fmt.Sprintf("Enqueue(%s)", id), outcome(err))
			t.Fatalf("Enqueue(%s) = %v, want nil", id, err)
		}
		o.h.Record("producer", fmt.Sprintf("Enqueue(%s)", id), "queued")
	}
}

func (o *observed) lease(holder string) (task.Lease, error) {
	return o.leaseCtx(context.Background(), holder)
}

func (o *observed) leaseCtx(ctx context.Context, holder string) (task.Lease, error) {
	l, err := o.q.Lease(ctx, holder)
	if err != nil {
		o.h.Record(holder, fmt.Sprintf("Lease(%q)", holder), outcome(err))
	} else {
		o.h.Record(holder, fmt.Sprintf("Lease(%q)", holder), o.describe(l))
	}
	return l, err
}

func (o *observed) extend(actor string, tok task.LeaseToken, d time.Duration) (task.Lease, error) {
	return o.extendCtx(context.Background(), actor, tok, d)
}

func (o *observed) extendCtx(ctx context.Context, actor string, tok task.LeaseToken, d time.Duration) (task.Lease, error) {
	l, err := o.q.Extend(ctx, tok, d)
	call := fmt.Sprintf("Extend(%s, %v)", o.tokens.name(tok), d)
	if err != nil {
		o.h.Record(actor, call, outcome(err))
	} else {
		o.h.Record(actor, call, "renewed: "+o.describe(l))
	}
	return l, err
}

func (o *observed) ack(actor string, tok task.LeaseToken) error {
	return o.ackCtx(context.Background(), actor, tok)
}

func (o *observed) ackCtx(ctx context.Context, actor string, tok task.LeaseToken) error {
	err := o.q.Ack(ctx, tok)
	o.h.Record(actor, fmt.Sprintf("Ack(%s)", o.tokens.name(tok)), outcome(err))
	return err
}

func (o *observed) nack(actor string, tok task.LeaseToken, delay time.Duration) error {
	return o.nackCtx(context.Background(), actor, tok, delay)
}

func (o *observed) nackCtx(ctx context.Context, actor string, tok task.LeaseToken, delay time.Duration) error {
	err := o.q.Nack(ctx, tok, delay)
	o.h.Record(actor, fmt.Sprintf("Nack(%s, %v)", o.tokens.name(tok), delay), outcome(err))
	return err
}

// mustLease leases as holder and wants the task id, or ends the case.
func (o *observed) mustLease(t *testing.T, holder, wantID string) task.Lease {
	t.Helper()
	l, err := o.lease(holder)
	if err != nil || l.Task.ID != wantID {
		t.Fatalf("Lease(%q) at t=%v = %s, want %s", holder, o.now(), o.leaseResult(l, err), wantID)
	}
	return l
}

// wantNoTask leases as holder and wants ErrNoTask, because of why.
func (o *observed) wantNoTask(t *testing.T, holder, why string) {
	t.Helper()
	l, err := o.lease(holder)
	if !errors.Is(err, task.ErrNoTask) {
		t.Errorf("Lease(%q) at t=%v = %s, want ErrNoTask: %s", holder, o.now(), o.leaseResult(l, err), why)
	}
}

func (o *observed) leaseResult(l task.Lease, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return o.describe(l)
}

// wantLost checks that a call was refused with ErrLeaseLost, because of why.
func wantLost(t *testing.T, call string, err error, why string) {
	t.Helper()
	if !errors.Is(err, task.ErrLeaseLost) {
		t.Errorf("%s = %v, want an error wrapping ErrLeaseLost: %s", call, err, why)
	}
}

// advanceTo moves the clock to the case's time at (from t=0s), narrating.
func (s *target) advanceTo(at time.Duration) {
	if d := at - s.now(); d > 0 {
		s.h.Note("the clock moves to t=%v", at)
		fakeclock.Advance(d)
	}
}

// refQueue is the suite's own lease queue, deliberately simple, for the
// worker cases: a worker is judged against a queue known to be right. It
// records every call in the timeline, counts how many leases each holder
// holds at once, and can fail, revoke or stall calls on the case's command.
// Its tokens are "ref-1", "ref-2", ...; the timeline names them T1, T2.
type refQueue struct {
	s          *target
	visibility time.Duration

	mu      sync.Mutex
	entries []*refEntry // in enqueue order

	// Faults, set by the case.
	leaseErr    error         // every Lease fails with it
	extendErr   error         // every Extend fails with it
	ackErr      error         // every Ack fails with it
	nackErr     error         // every Nack fails with it
	revokeNext  bool          // the next Extend finds its lease revoked (ErrLeaseLost)
	stallExtend bool          // Extend blocks until its ctx is done
	ackGate     chan struct{} // when set, every Ack waits until it is closed before it is answered

	// Observations.
	maxHeld    map[string]int // the most leases a holder held at once
	leaseCalls []time.Duration
	extends    []refCall
	acks       []refCall
	nacks      []refCall
	callsAt    map[time.Duration]int // calls at one instant, to catch spinning
	spinning   string                // what the queue saw when it caught a spin
}

type refEntry struct {
	task      task.Task
	visibleAt time.Time
	token     task.LeaseToken
	holder    string
	attempts  int
	acked     bool
}

// refCall is one Extend, Ack or Nack the worker made.
type refCall struct {
	at    time.Duration
	token task.LeaseToken
	d     time.Duration
	err   error
}

// spinLimit is how many calls at one virtual instant count as a worker
// spinning instead of waiting.
const spinLimit = 200

func (s *target) refQueue(visibility time.Duration, ids ...string) *refQueue {
	q := &refQueue{s: s, visibility: visibility, maxHeld: map[string]int{}, callsAt: map[time.Duration]int{}}
	for _, id := range ids {
		q.entries = append(q.entries, &refEntry{task: task.Task{ID: id, DocumentID: "doc-" + id}, visibleAt: time.Now()})
		s.h.Record("producer", fmt.Sprintf("Enqueue(%s)", id), "queued")
	}
	return q
}

// spin counts a call and, past spinLimit calls at one instant, parks the
// caller until ctx ends: a worker that never waits would otherwise keep
// the bubble's clock from ever moving. q.mu must not be held.
func (q *refQueue) spin(ctx context.Context, call string) error {
	q.mu.Lock()
	now := q.s.now()
	q.callsAt[now]++
	n := q.callsAt[now]
	if n == spinLimit {
		q.spinning = fmt.Sprintf("%d calls at t=%v without waiting, the last one %s", n, now, call)
		q.s.h.Record("suite's queue", call, q.spinning+": the worker is spinning; parked until ctx ends")
	}
	q.mu.Unlock()
	if n >= spinLimit {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// holderOf names the worker a token was issued to, for the timeline. q.mu
// must be held.
func (q *refQueue) holderOf(tok task.LeaseToken) string {
	for _, e := range q.entries {
		if tok != "" && e.token == tok {
			return e.holder
		}
	}
	return "worker"
}

func (q *refQueue) find(tok task.LeaseToken, now time.Time) *refEntry {
	for _, e := range q.entries {
		if !e.acked && tok != "" && e.token == tok && now.Before(e.visibleAt) {
			return e
		}
	}
	return nil
}

func (q *refQueue) held(holder string, now time.Time) int {
	n := 0
	for _, e := range q.entries {
		if !e.acked && e.token != "" && e.holder == holder && now.Before(e.visibleAt) {
			n++
		}
	}
	return n
}

func (q *refQueue) lease(e *refEntry) task.Lease {
	return task.Lease{Task: e.task, Token: e.token, Holder: e.holder, Attempt: e.attempts, Expires: e.visibleAt}
}

func (q *refQueue) Lease(ctx context.Context, holder string) (task.Lease, error) {
	call := fmt.Sprintf("Lease(%q)", holder)
	if err := q.spin(ctx, call); err != nil {
		return task.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return task.Lease{}, fmt.Errorf("suite's queue: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.leaseCalls = append(q.leaseCalls, q.s.now())
	if q.leaseErr != nil {
		q.s.h.Record(holder, call, "error: "+q.leaseErr.Error())
		return task.Lease{}, q.leaseErr
	}
	now := time.Now()
	for _, e := range q.entries {
		if e.acked || now.Before(e.visibleAt) {
			continue
		}
		if e.token != "" {
			q.s.h.Recordf("suite's queue", fmt.Sprintf("lease %s of %s", q.s.tokens.name(e.token), e.task.ID), "ended at %s unacknowledged (%s's): the task is visible again", q.s.at(e.visibleAt), e.holder)
		}
		e.token = task.LeaseToken(fmt.Sprintf("ref-%d", q.s.refTokens.Add(1)))
		e.holder = holder
		e.attempts++
		e.visibleAt = now.Add(q.visibility)
		l := q.lease(e)
		held := q.held(holder, now)
		q.maxHeld[holder] = max(q.maxHeld[holder], held)
		q.s.h.Record(holder, call, fmt.Sprintf("%s (%s holds %d lease(s) now)", q.s.describe(l), holder, held))
		return l, nil
	}
	if q.callsAt[q.s.now()] <= 3 { // one line per instant is enough
		q.s.h.Record(holder, call, "no visible task")
	}
	return task.Lease{}, fmt.Errorf("suite's queue: %w", task.ErrNoTask)
}

func (q *refQueue) Extend(ctx context.Context, tok task.LeaseToken, d time.Duration) (task.Lease, error) {
	call := fmt.Sprintf("Extend(%s, %v)", q.s.tokens.name(tok), d)
	if err := q.spin(ctx, call); err != nil {
		return task.Lease{}, err
	}
	q.mu.Lock()
	actor := q.holderOf(tok)
	if q.stallExtend {
		q.s.h.Record(actor, call, "stalls: the queue does not answer")
		q.mu.Unlock()
		<-ctx.Done()
		q.mu.Lock()
		q.extends = append(q.extends, refCall{at: q.s.now(), token: tok, d: d, err: ctx.Err()})
		q.s.h.Record(actor, call, "the caller gives up: "+ctx.Err().Error())
		q.mu.Unlock()
		return task.Lease{}, fmt.Errorf("suite's queue: %w", ctx.Err())
	}
	defer q.mu.Unlock()
	rec := refCall{at: q.s.now(), token: tok, d: d}
	defer func() { q.extends = append(q.extends, rec) }()
	if err := ctx.Err(); err != nil {
		rec.err = fmt.Errorf("suite's queue: %w", err)
		q.s.h.Record(actor, call, outcome(rec.err))
		return task.Lease{}, rec.err
	}
	if q.extendErr != nil {
		rec.err = q.extendErr
		q.s.h.Record(actor, call, outcome(rec.err))
		return task.Lease{}, rec.err
	}
	now := time.Now()
	e := q.find(tok, now)
	if e != nil && q.revokeNext {
		q.revokeNext = false
		q.s.h.Recordf("suite's queue", fmt.Sprintf("revokes %s", q.s.tokens.name(tok)), "%s's lease of %s is over (as if %s had stalled past its expiry and the task was leased again)", e.holder, e.task.ID, e.holder)
		e.visibleAt = now
		e = nil
	}
	if e == nil || d <= 0 || d > task.MaxVisibilityTimeout {
		rec.err = fmt.Errorf("suite's queue: extend %s: %w", q.s.tokens.name(tok), task.ErrLeaseLost)
		if e != nil {
			rec.err = fmt.Errorf("suite's queue: extend by %v: %w", d, task.ErrInvalidDuration)
		}
		q.s.h.Record(actor, call, outcome(rec.err))
		return task.Lease{}, rec.err
	}
	e.visibleAt = now.Add(d)
	l := q.lease(e)
	q.s.h.Record(e.holder, call, "renewed: "+q.s.describe(l))
	return l, nil
}

func (q *refQueue) Ack(ctx context.Context, tok task.LeaseToken) error {
	return q.settle(ctx, "Ack", tok, 0)
}

func (q *refQueue) Nack(ctx context.Context, tok task.LeaseToken, delay time.Duration) error {
	return q.settle(ctx, "Nack", tok, delay)
}

func (q *refQueue) settle(ctx context.Context, op string, tok task.LeaseToken, delay time.Duration) error {
	call := fmt.Sprintf("%s(%s)", op, q.s.tokens.name(tok))
	if op == "Nack" {
		call = fmt.Sprintf("Nack(%s, %v)", q.s.tokens.name(tok), delay)
	}
	q.mu.Lock()
	if gate := q.ackGate; gate != nil && op == "Ack" {
		q.s.h.Record(q.holderOf(tok), call, "stalls: the queue is slow to answer")
		q.mu.Unlock()
		<-gate
		q.mu.Lock()
	}
	defer q.mu.Unlock()
	rec := refCall{at: q.s.now(), token: tok, d: delay}
	defer func() {
		if op == "Ack" {
			q.acks = append(q.acks, rec)
		} else {
			q.nacks = append(q.nacks, rec)
		}
	}()
	actor := q.holderOf(tok)
	now := time.Now()
	e := q.find(tok, now)
	switch {
	case ctx.Err() != nil:
		rec.err = fmt.Errorf("suite's queue: %w", ctx.Err())
	case op == "Ack" && q.ackErr != nil:
		rec.err = q.ackErr
	case op == "Nack" && q.nackErr != nil:
		rec.err = q.nackErr
	case e == nil:
		rec.err = fmt.Errorf("suite's queue: %s: %w", call, task.ErrLeaseLost)
	case delay < 0 || delay > task.MaxVisibilityTimeout:
		rec.err = fmt.Errorf("suite's queue: nack delay %v: %w", delay, task.ErrInvalidDuration)
	case op == "Ack":
		e.acked = true
	default:
		e.token = ""
		e.visibleAt = now.Add(delay)
	}
	q.s.h.Record(actor, call, outcome(rec.err))
	return rec.err
}

// acked reports whether the task with id was acknowledged.
func (q *refQueue) acked(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.entries {
		if e.task.ID == id {
			return e.acked
		}
	}
	return false
}

// snapshot returns copies of the observations, under the lock.
func (q *refQueue) snapshot() (leaseCalls []time.Duration, extends, acks, nacks []refCall, maxHeld map[string]int, spinning string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := map[string]int{}
	for k, v := range q.maxHeld {
		m[k] = v
	}
	return append([]time.Duration(nil), q.leaseCalls...), append([]refCall(nil), q.extends...), append([]refCall(nil), q.acks...), append([]refCall(nil), q.nacks...), m, q.spinning
}

// set changes the queue's faults under its lock.
func (q *refQueue) set(f func(q *refQueue)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f(q)
}

// handlers is the work the suite gives a worker: every handler call is a
// job the case starts, watches and finishes. A job waits for the case's
// verdict or for its ctx to end, whichever comes first, and never sleeps on
// the clock (see suites.Call on why).
type handlers struct {
	s       *target
	started chan *job
	// linger makes a handler whose ctx is cancelled take its time to stop:
	// it records the cancellation and returns only when the case finishes
	// it, as real work does that has a step to wind down.
	linger bool
}

type job struct {
	lease    task.Lease
	ctx      context.Context
	finish   chan error    // the case's verdict: what the handler returns
	returned chan struct{} // closed when the handler has returned

	mu          sync.Mutex
	cancelledAt time.Duration // when the handler saw its ctx end; -1 while it has not
}

func (s *target) handlers() *handlers {
	return &handlers{s: s, started: make(chan *job, 256)}
}

func (hs *handlers) handle(ctx context.Context, l task.Lease) error {
	j := &job{lease: l, ctx: ctx, finish: make(chan error, 1), returned: make(chan struct{}), cancelledAt: -1}
	defer close(j.returned)
	hs.s.h.Record(l.Holder, "handler starts", fmt.Sprintf("%s, token %s", l.Task.ID, hs.s.tokens.name(l.Token)))
	hs.started <- j
	select {
	case err := <-j.finish:
		if err != nil {
			hs.s.h.Record(l.Holder, "handler returns", fmt.Sprintf("%s failed: %v", l.Task.ID, err))
		} else {
			hs.s.h.Record(l.Holder, "handler returns", l.Task.ID+" done, its outcome durable")
		}
		return err
	case <-ctx.Done():
		j.mu.Lock()
		j.cancelledAt = hs.s.now()
		j.mu.Unlock()
		if hs.linger {
			hs.s.h.Record(l.Holder, "handler's ctx is cancelled", l.Task.ID+": the handler winds down its current step before it returns")
			err := <-j.finish
			hs.s.h.Record(l.Holder, "handler returns", fmt.Sprintf("%s stopped: %v", l.Task.ID, err))
			return err
		}
		hs.s.h.Record(l.Holder, "handler's ctx is cancelled", l.Task.ID+": the handler stops work and returns "+ctx.Err().Error())
		return ctx.Err()
	}
}

// next returns the next handler the worker started, or nil when it has
// started none (once the bubble is idle).
func (hs *handlers) next() *job {
	fakeclock.Wait()
	select {
	case j := <-hs.started:
		return j
	default:
		return nil
	}
}

// done finishes the job with err and waits until the worker is idle again.
func (j *job) done(err error) {
	j.finish <- err
	fakeclock.Wait()
}

func (j *job) cancelled() (time.Duration, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cancelledAt, j.cancelledAt >= 0
}

// running is a worker whose Run is going.
type running struct {
	s      *target
	name   string
	cancel context.CancelFunc
	call   *suites.Call
	err    error
}

// startWorker builds the student's worker over q and starts its Run, or
// ends the case when Run returns at once.
func (s *target) startWorker(t *testing.T, q task.LeaseQueue, opts task.WorkerOptions, hs *handlers) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{s: s, name: opts.Name, cancel: cancel}
	var w Runner
	if !suites.Guard(t, func() { w = s.newWorker(q, opts, hs.handle) }) {
		cancel()
		t.FailNow()
	}
	s.h.Recordf(opts.Name, "Run", "capacity %d, poll interval %v", opts.Capacity, opts.PollInterval)
	r.call = suites.Go(func() {
		suites.Guard(t, func() { r.err = w.Run(ctx) })
		s.h.Record(opts.Name, "Run returns", fmt.Sprint(r.err))
	})
	t.Cleanup(func() {
		cancel()
		fakeclock.Wait()
		if !r.call.Returned() {
			t.Errorf("Run(ctx) had not returned after its ctx was cancelled at the end of the case, want it to return once its handlers have")
		}
	})
	fakeclock.Wait()
	if r.call.Returned() {
		t.Fatalf("Run(ctx) returned %v at once, want it to keep working until ctx is cancelled", r.err)
	}
	return r
}

// stop cancels Run's ctx and returns what Run returned, and whether it
// returned without the clock moving.
func (r *running) stop() (error, bool) {
	r.s.h.Note("cancel the worker's ctx")
	r.cancel()
	fakeclock.Wait()
	if !r.call.Returned() {
		return nil, false
	}
	return r.err, true
}
