package backpressuresuite

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
	"sync/atomic"
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
// observed: the jobs it saw queued, in the order they were queued and with
// the instant each was; the Submits still in progress (waiting for room,
// with the instant their wait ends, or held in their claim, with a place
// reserved); the tickets Take handed out and which are done; and the
// counts and latencies Stats must report. For each step it says what the
// README's rules allow the queue to answer, never how a queue gets there.

// modelTenants are the tenants a sequence draws from: names a queue that
// compares tenants as anything but exact bytes would merge (case, a
// trailing space, invalid UTF-8 and U+FFFD, the empty name).
var modelTenants = [][]string{
	{"acme", "Acme", "b"},
	{"acme", "acme ", "b"},
	{"\xff", "\ufffd", "b"},
	{"", "b", "c"},
}

// modelKeys are the idempotency keys: the empty key, multi-byte text, a
// NUL. The queue never compares keys; the claim store does.
var modelKeys = []string{"k", "", "k\x00", "caf\u00e9"}

// modelCapacities and modelLimits are the options the sequences' queues
// are built with (0 and negative values mean the defaults, R1).
var (
	modelCapacities = []int{1, 2, 3, 2, 3, 0, -1}
	modelLimits     = []int{1, 2, 0, -1, 9, 1, 2}
	modelMaxWaits   = []time.Duration{10 * time.Second, 0, time.Hour, 10 * time.Second, -time.Second}
)

// claimPlan is what the suite's claim store does with a Submit's claim.
type claimPlan int

const (
	claimOK       claimPlan = iota // claimed, unless the key is claimed already (a duplicate)
	claimDown                      // the store is down
	claimFullErr                   // the store fails with an error that wraps ErrQueueFull
	claimHold                      // held still until a later step lets it answer
	claimQuietEnd                  // released at the end of the sequence
)

func (p claimPlan) String() string {
	switch p {
	case claimOK:
		return "claims the key"
	case claimDown:
		return "fails: the store is down"
	case claimFullErr:
		return "fails with an error that wraps ErrQueueFull"
	case claimHold:
		return "is held still"
	}
	return "is released"
}

var (
	errModelDuplicate = errors.New("claim store: key already claimed")
	errModelDown      = errors.New("claim store: connection refused")
	errModelClaimFull = fmt.Errorf("claim store: %w (its own table)", task.ErrQueueFull)
	errModelStray     = errors.New("claim store: no Submit of this tenant and key is in progress")
)

type pair struct{ tenant, key string }

// submit is one Submit the sequence made.
type submit struct {
	n           int
	tenant, key string
	job         task.Task
	plan        claimPlan
	cancel      context.CancelFunc
	deadline    time.Time // the context's deadline; zero for none
	start       time.Time // when Submit was called
	end         time.Time // a waiter's wait ends then
	ctxWins     bool      // its context's deadline ends the wait (on a tie too)
	cancelled   bool
	waiting     bool // waiting for room (holds no place)
	release     chan claimPlan
	call        *suites.Call
	err         error // what Submit returned, once call has returned

	// Written by the claim store, under its lock.
	claims   int   // Claim calls
	holding  bool  // its claim is held still
	answered bool  // its claim has answered
	claimErr error // what the claim answered
}

func (s *submit) actor() string { return "producer " + show(s.tenant) }
func (s *submit) what() string  { return fmt.Sprintf("Submit(%s, %s)", show(s.tenant), show(s.key)) }

// modelClaimer is the claim store of the model's queues: a key claimed once
// is a duplicate afterwards, as in lab 01; each Claim is matched to the
// Submit in progress for its tenant and key.
type modelClaimer struct {
	mu       sync.Mutex
	inFlight map[pair]*submit
	claimed  map[pair]bool
	stray    []string
}

func (c *modelClaimer) Claim(ctx context.Context, tenant, key string) error {
	p := pair{tenant, key}
	c.mu.Lock()
	s := c.inFlight[p]
	if s == nil {
		c.stray = append(c.stray, fmt.Sprintf("Claim(%s, %s)", show(tenant), show(key)))
		c.mu.Unlock()
		return errModelStray
	}
	s.claims++
	plan := s.plan
	if plan == claimHold {
		s.holding = true
	}
	c.mu.Unlock()
	if plan == claimHold {
		plan = <-s.release
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.holding, s.answered = false, true
	switch plan {
	case claimDown:
		s.claimErr = errModelDown
	case claimFullErr:
		s.claimErr = errModelClaimFull
	default:
		if c.claimed[p] {
			s.claimErr = errModelDuplicate
		} else {
			c.claimed[p] = true
			s.claimErr = nil
		}
	}
	return s.claimErr
}

// observed is what the claim store saw of s: its claims, whether one is
// held, and what it answered.
func (c *modelClaimer) observed(s *submit) (claims int, holding, answered bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.claims, s.holding, s.answered, s.claimErr
}

type modelJob struct {
	tenant, key string
	job         task.Task
	enqueued    time.Time
}

type modelTicket struct {
	job  modelJob
	done bool
}

// bpModel is the abstract state of one sequence.
type bpModel struct {
	e     *target
	q     Queue
	seq   *modelcheck.Seq
	h     *suites.History
	cl    *modelClaimer // nil when the queue has no Claimer
	opts  task.AdmissionOptions
	cap   int // Capacity, its default applied (R1)
	limit int // TenantLimit, its default applied (R1)

	tenants []string
	jobs    []modelJob // waiting, in the order they were queued
	open    []*submit  // Submits in progress: waiting for room or held in their claim
	all     []*submit  // every Submit, for the end of the sequence
	tickets map[task.Ticket]*modelTicket
	issued  []task.Ticket
	want    task.AdmissionStats // Rejected, Completed and the latencies
	calls   []*suites.Call
	cancels []context.CancelFunc
	n       int
	quiet   bool // nothing was called since the bubble was last idle
}

func show(s string) string { return strconv.QuoteToASCII(s) }

func (m *bpModel) now() time.Time { return time.Now() }

func (m *bpModel) at(t time.Time) string { return "t=" + t.Sub(fakeclock.Epoch).String() }

// goCall starts f in a goroutine of its own; a panic of the queue's is the
// message returned through panicked.
func (m *bpModel) goCall(f func(), panicked *string) *suites.Call {
	m.quiet = false
	c := suites.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				*panicked = fmt.Sprintf("panicked: %v", r)
			}
		}()
		f()
	})
	m.calls = append(m.calls, c)
	for i := 0; i < 50 && !c.Returned(); i++ {
		runtime.Gosched()
	}
	return c
}

// quick runs f, which must answer at once, and fails the step if it does
// not.
func (m *bpModel) quick(what, why string, f func()) {
	var panicked string
	c := m.goCall(f, &panicked)
	if !c.Returned() && !c.Settle() {
		m.h.Record("test", what, "still waiting")
		m.seq.Fatalf("%s did not return: it waits for something (%s), want an answer at once", what, why)
	}
	if panicked != "" {
		m.seq.Fatalf("%s %s", what, panicked)
	}
}

// quiesce waits until every goroutine of the bubble is parked, so that
// every Submit in progress has done whatever it was going to do.
func (m *bpModel) quiesce() {
	if len(m.open) == 0 || m.quiet {
		return
	}
	gate := make(chan struct{})
	probe := suites.Go(func() { <-gate })
	probe.Settle()
	close(gate)
	probe.Wait()
}

// used returns the places taken (jobs waiting and places reserved by
// claims in progress) in the queue and in tenant's share.
func (m *bpModel) used(tenant string) (queue, share int) {
	for _, j := range m.jobs {
		queue++
		if j.tenant == tenant {
			share++
		}
	}
	for _, s := range m.open {
		if !s.waiting {
			queue++
			if s.tenant == tenant {
				share++
			}
		}
	}
	return queue, share
}

// noRoom says why a job of tenant cannot be admitted now (R2, R7), or nil.
func (m *bpModel) noRoom(tenant string) error {
	queue, share := m.used(tenant)
	switch {
	case queue >= m.cap:
		return task.ErrQueueFull
	case share >= m.limit:
		return task.ErrTenantFull
	}
	return nil
}

func (m *bpModel) describe(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

func (m *bpModel) drawTenant(t *rapid.T) string {
	return rapid.SampledFrom(m.tenants).Draw(t, "tenant")
}
func (m *bpModel) drawKey(t *rapid.T) string { return rapid.SampledFrom(modelKeys).Draw(t, "key") }

// pick draws one of the Submits in progress that ok accepts, or returns
// nil when there is none.
func (m *bpModel) pick(t *rapid.T, ok func(*submit) bool) *submit {
	var candidates []*submit
	for _, s := range m.open {
		if ok(s) {
			candidates = append(candidates, s)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	return candidates[rapid.IntRange(0, 5).Draw(t, "which")%len(candidates)]
}

func (m *bpModel) openFor(tenant, key string) *submit {
	for _, s := range m.open {
		if s.tenant == tenant && s.key == key {
			return s
		}
	}
	return nil
}

func (m *bpModel) remove(s *submit) {
	for i, o := range m.open {
		if o == s {
			m.open = append(m.open[:i], m.open[i+1:]...)
			break
		}
	}
	if m.cl != nil {
		m.cl.mu.Lock()
		if m.cl.inFlight[pair{s.tenant, s.key}] == s {
			delete(m.cl.inFlight, pair{s.tenant, s.key})
		}
		m.cl.mu.Unlock()
	}
	m.quiet = false
	s.cancel()
}

func (m *bpModel) claimsOf(s *submit) (claims int, holding, answered bool, err error) {
	if m.cl == nil {
		return 0, false, false, nil
	}
	return m.cl.observed(s)
}

// queued records s's job as queued now.
func (m *bpModel) queued(s *submit) {
	m.jobs = append(m.jobs, modelJob{tenant: s.tenant, key: s.key, job: s.job, enqueued: m.now()})
}

// stepSubmit submits a job with a drawn context, its claim answering as
// drawn.
func (m *bpModel) stepSubmit(t *rapid.T) {
	tenant, key := m.drawTenant(t), m.drawKey(t)
	if m.openFor(tenant, key) != nil {
		// One Submit in progress per tenant and key, so that each claim
		// names its Submit: another key, if one is free.
		for _, k := range modelKeys {
			if m.openFor(tenant, k) == nil {
				key = k
				break
			}
		}
		if m.openFor(tenant, key) != nil {
			t.SkipNow()
		}
	}
	kind := rapid.SampledFrom([]string{"background", "background", "deadline", "deadline", "cancelled", "expired"}).Draw(t, "context")
	plan := claimOK
	if m.cl != nil {
		plan = rapid.SampledFrom([]claimPlan{claimOK, claimOK, claimOK, claimDown, claimFullErr, claimHold, claimHold}).Draw(t, "claim")
	}
	m.n++
	s := &submit{n: m.n, tenant: tenant, key: key, plan: plan, start: m.now(), release: make(chan claimPlan, 1)}
	m.all = append(m.all, s)
	s.job = task.Task{ID: fmt.Sprintf("job-%d", m.n), Account: "acct-" + tenant, DocumentID: "contract-" + key, Subject: "Please sign"}
	ctx, cancel := context.WithCancel(context.Background())
	note := ""
	switch kind {
	case "deadline":
		ds := []time.Duration{time.Second, 2 * time.Hour}
		if m.opts.MaxWait > 0 {
			ds = append(ds, m.opts.MaxWait-time.Nanosecond, m.opts.MaxWait, m.opts.MaxWait, m.opts.MaxWait+time.Nanosecond)
		}
		d := rapid.SampledFrom(ds).Draw(t, "timeout")
		ctx, cancel = context.WithTimeout(context.Background(), d)
		s.deadline = m.now().Add(d)
		note = fmt.Sprintf(", its context's deadline %v away", d)
	case "cancelled":
		cancel()
		note = ", its context cancelled"
	case "expired":
		ctx, cancel = context.WithDeadline(context.Background(), m.now())
		s.deadline = m.now()
		note = ", its context past its deadline"
	}
	s.cancel = cancel
	m.cancels = append(m.cancels, cancel)
	if m.cl != nil {
		note += ", the claim store " + plan.String()
		m.cl.mu.Lock()
		m.cl.inFlight[pair{tenant, key}] = s
		m.cl.mu.Unlock()
	}
	what := s.what()
	room := m.noRoom(tenant)
	var panicked string
	s.call = m.goCall(func() { s.err = m.q.Submit(ctx, tenant, key, s.job) }, &panicked)
	wantWait := ctx.Err() == nil && ((room == nil && plan == claimHold) || (room != nil && m.opts.MaxWait > 0))
	var returned bool
	if wantWait {
		m.open = append(m.open, s) // for quiesce
		m.quiesce()
		returned = s.call.Returned()
		m.open = m.open[:len(m.open)-1]
	} else {
		returned = s.call.Returned() || s.call.Settle()
	}
	if panicked != "" {
		m.h.Record(s.actor(), what+note, panicked)
		m.seq.Fatalf("%s %s", what, panicked)
	}
	claims, holding, _, claimErr := m.claimsOf(s)
	if !returned {
		switch {
		case holding:
			m.h.Record(s.actor(), what+note, "admitted; its claim is in progress")
		default:
			m.h.Record(s.actor(), what+note, "waits")
		}
	} else {
		m.h.Record(s.actor(), what+note, m.describe(s.err, "admitted"))
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		switch {
		case !returned:
			m.seq.Fatalf("%s with a done context did not return, want an error wrapping %v at once (R13)", what, ctxErr)
		case !errors.Is(s.err, ctxErr) || errors.Is(s.err, task.ErrQueueFull):
			m.seq.Fatalf("%s with a done context = %v, want an error wrapping %v, and not ErrQueueFull (R13)", what, s.err, ctxErr)
		case claims > 0:
			m.seq.Fatalf("%s with a done context claimed its key, want nothing claimed (R13)", what)
		}
		m.remove(s)
		return
	}
	if room == nil {
		m.admitted(s, returned, claims, holding, claimErr, true)
		return
	}
	if claims > 0 {
		m.seq.Fatalf("%s found no room (%v) but claimed its key, want its key left unclaimed for the retry (R5)", what, room)
	}
	if m.opts.MaxWait <= 0 {
		switch {
		case !returned:
			m.seq.Fatalf("%s found no room with MaxWait %v and did not return, want it refused at once with an error wrapping %v (R1, R2, R7)", what, m.opts.MaxWait, room)
		default:
			m.refused(s, room, "at once, with MaxWait "+m.opts.MaxWait.String())
		}
		m.remove(s)
		return
	}
	if returned {
		m.seq.Fatalf("%s found no room = %v at once, want it to wait for a place until MaxWait (%v) has passed or its context is done (R4)", what, s.err, m.opts.MaxWait)
	}
	s.waiting = true
	s.end = m.now().Add(m.opts.MaxWait)
	if !s.deadline.IsZero() && !s.deadline.After(s.end) {
		s.end, s.ctxWins = s.deadline, true
	}
	m.open = append(m.open, s)
}

// refused checks a Submit refused for want of room: the error R2 or R7
// gives (ErrQueueFull itself when no place of the queue is free), counted.
func (m *bpModel) refused(s *submit, want error, when string) {
	switch {
	case !errors.Is(s.err, want):
		m.seq.Fatalf("%s found no room (%s) = %v, want an error wrapping %v (R2, R4, R7)", s.what(), when, s.err, want)
	case want == task.ErrQueueFull && errors.Is(s.err, task.ErrTenantFull):
		m.seq.Fatalf("%s = %v %s, want ErrQueueFull, not ErrTenantFull: no place of the queue is free (R2, R4)", s.what(), s.err, when)
	}
	m.want.Rejected++
}

// admitted checks a Submit that had room: it claimed its key once (when
// the queue has a Claimer), and its claim decides the rest (R5, R6).
func (m *bpModel) admitted(s *submit, returned bool, claims int, holding bool, claimErr error, fresh bool) {
	what := s.what()
	if returned && claims == 0 && s.err != nil {
		queue, share := m.used(s.tenant)
		m.seq.Fatalf("%s = %v, want it admitted: %d of the queue's %d places and %d of its tenant's %d are taken (R2, R7)", what, s.err, queue, m.cap, share, m.limit)
	}
	if m.cl != nil && claims != 1 {
		m.seq.Fatalf("%s was admitted and claimed its key %d times, want once (R5)", what, claims)
	}
	if holding {
		if returned {
			m.seq.Fatalf("%s returned %v while its claim was still in progress, want it to wait for the claim (R5)", what, s.err)
		}
		s.waiting = false
		if fresh {
			m.open = append(m.open, s)
		}
		return
	}
	if !returned {
		m.seq.Fatalf("%s was admitted and its claim answered, but it did not return: it waits for something, want it to return at once (R5, R6)", what)
	}
	m.finished(s, claimErr)
	m.remove(s)
}

// finished checks what an admitted Submit returned once its claim answered.
func (m *bpModel) finished(s *submit, claimErr error) {
	switch {
	case claimErr == nil && s.err != nil:
		m.seq.Fatalf("%s = %v after its key was claimed, want nil and the job queued (R6: a claimed job is queued, even if its context ended during the claim)", s.what(), s.err)
	case claimErr != nil && !errors.Is(s.err, claimErr):
		m.seq.Fatalf("%s whose claim failed with %q = %v, want an error wrapping the claim store's (R6)", s.what(), claimErr, s.err)
	}
	if claimErr == nil {
		m.queued(s)
	}
}

// resolve observes the Submits still waiting for room once the bubble is
// quiet, after a step that may have freed a place: each place freed admits
// at once a waiter it has room for (any one, R4), whose claim then decides;
// a waiter nothing admitted has no room, and is still waiting.
func (m *bpModel) resolve(step string) {
	m.quiesce()
	var admitted, still []*submit
	for _, s := range m.open {
		claims, holding, answered, _ := m.claimsOf(s)
		switch {
		case !s.waiting:
			if s.call.Returned() {
				m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
				m.seq.Fatalf("%s returned %v while its claim was still held, want it to wait for the claim (R5)", s.what(), s.err)
			}
		case s.call.Returned():
			m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
			if m.cl != nil && claims == 0 {
				m.seq.Fatalf("%s, waiting for room, returned %v after %s, want it to wait on until MaxWait (%s) or until a place it has room for is freed (R4)", s.what(), s.err, step, m.at(s.end))
			}
			if m.cl == nil && s.err != nil {
				m.seq.Fatalf("%s, waiting for room, returned %v after %s, want it to wait on until %s or until a place it has room for is freed, then nil (R4)", s.what(), s.err, step, m.at(s.end))
			}
			admitted = append(admitted, s)
		case claims > 0 || holding || answered:
			m.h.Record(s.actor(), s.what(), "admitted; its claim is in progress")
			admitted = append(admitted, s)
		default:
			still = append(still, s)
		}
	}
	if !m.explain(admitted, still) {
		var names []string
		for _, s := range admitted {
			names = append(names, s.what())
		}
		for _, s := range still {
			if m.noRoom(s.tenant) == nil {
				m.h.Record(s.actor(), s.what(), "still waiting")
			}
		}
		m.seq.Fatalf("after %s, the waiting Submits admitted were %v: no order of admissions, one place at a time, gives that, want each place freed to admit at once one waiting Submit that has room for it (its queue place and its tenant's share), and no other (R4, R6, R7)", step, names)
	}
	for _, s := range admitted {
		claims, holding, _, claimErr := m.claimsOf(s)
		m.admitted(s, s.call.Returned(), claims, holding, claimErr, false)
	}
}

// explain reports whether some order of the admissions observed gives
// what was observed: each admitted waiter had room when it was admitted,
// and no waiter left waiting has room at the end.
func (m *bpModel) explain(admitted, still []*submit) bool {
	if len(admitted) == 0 {
		for _, s := range still {
			if m.noRoom(s.tenant) == nil {
				return false
			}
		}
		return true
	}
	for i, s := range admitted {
		if m.noRoom(s.tenant) != nil {
			continue
		}
		_, holding, _, claimErr := m.claimsOf(s)
		takes := holding || (s.call.Returned() && (m.cl == nil || claimErr == nil))
		saved, open := s.waiting, m.open
		if takes {
			// Count its place, for now, as a place reserved.
			s.waiting = false
		} else {
			// Its claim failed: its place came back. It no longer waits.
			m.open = without(m.open, s)
		}
		rest := append(append([]*submit(nil), admitted[:i]...), admitted[i+1:]...)
		ok := m.explain(rest, still)
		s.waiting, m.open = saved, open
		if ok {
			return true
		}
	}
	return false
}

func without(list []*submit, s *submit) []*submit {
	out := make([]*submit, 0, len(list))
	for _, o := range list {
		if o != s {
			out = append(out, o)
		}
	}
	return out
}

// stepTake takes the oldest job.
func (m *bpModel) stepTake(t *rapid.T) {
	cancelled := rapid.IntRange(0, 4).Draw(t, "cancelled context") == 0
	ctx, cancel := context.WithCancel(context.Background())
	if cancelled {
		cancel()
	}
	defer cancel()
	var a task.Admitted
	var err error
	what := "Take()"
	if cancelled {
		what = "Take() with a cancelled context"
	}
	m.quick(what, "a Take never waits for a job, and a slow claim holds up no Take (R3, R5)", func() { a, err = m.q.Take(ctx) })
	if err == nil {
		m.h.Record("worker", what, fmt.Sprintf("%s/%s %s (ticket %d), enqueued at %s", show(a.Tenant), show(a.Key), a.Job.ID, a.Ticket, m.at(a.Enqueued)))
	} else {
		m.h.Record("worker", what, "error: "+err.Error())
	}
	switch {
	case cancelled:
		if !errors.Is(err, context.Canceled) {
			m.seq.Fatalf("%s = %v, want an error wrapping context.Canceled, and nothing taken (R13)", what, describeTake(a, err))
		}
		return
	case len(m.jobs) == 0:
		if !errors.Is(err, task.ErrQueueEmpty) {
			m.seq.Fatalf("Take() with no job waiting = %s, want an error wrapping ErrQueueEmpty (R3)", describeTake(a, err))
		}
		return
	}
	j := m.jobs[0]
	want := fmt.Sprintf("%s/%s %s, enqueued at %s", show(j.tenant), show(j.key), j.job.ID, m.at(j.enqueued))
	switch {
	case err != nil:
		m.seq.Fatalf("Take() with %d jobs waiting = %v, want the oldest, %s (R3)", len(m.jobs), err, want)
	case a.Tenant != j.tenant || a.Key != j.key || a.Job != j.job:
		m.seq.Fatalf("Take() = %s/%s %s, want the oldest job waiting, %s, its tenant, key and job unchanged (R3)", show(a.Tenant), show(a.Key), a.Job.ID, want)
	case !a.Enqueued.Equal(j.enqueued):
		m.seq.Fatalf("Take() = %s enqueued at %s, want enqueued at %s, the instant it entered the queue, once its claim succeeded (R3)", a.Job.ID, m.at(a.Enqueued), m.at(j.enqueued))
	case a.Ticket == 0:
		m.seq.Fatalf("Take() = %s with ticket 0, want a ticket that is not zero (R3)", a.Job.ID)
	case m.tickets[a.Ticket] != nil:
		m.seq.Fatalf("Take() = %s with ticket %d, which an earlier Take handed out with %s, want a ticket no other Take had (R3)", a.Job.ID, a.Ticket, m.tickets[a.Ticket].job.job.ID)
	}
	m.jobs = m.jobs[1:]
	m.tickets[a.Ticket] = &modelTicket{job: j}
	m.issued = append(m.issued, a.Ticket)
	m.resolve("the Take freed a place of " + show(j.tenant))
}

// stepDone says a ticket's job is done: a ticket taken, one done already,
// zero, or one never handed out.
func (m *bpModel) stepDone(t *rapid.T) {
	var tk task.Ticket
	switch rapid.IntRange(0, 5).Draw(t, "which ticket") {
	case 0:
		tk = 0
	case 1:
		tk = 1 << 40
	default:
		if len(m.issued) == 0 {
			m.stepTake(t)
			return
		}
		tk = m.issued[rapid.IntRange(0, 1000).Draw(t, "ticket")%len(m.issued)]
	}
	cancelled := rapid.IntRange(0, 4).Draw(t, "cancelled context") == 0
	ctx, cancel := context.WithCancel(context.Background())
	if cancelled {
		cancel()
	}
	defer cancel()
	what := fmt.Sprintf("Done(ticket %d)", tk)
	if cancelled {
		what += " with a cancelled context"
	}
	var err error
	m.quick(what, "a slow claim holds up no Done (R5, R14)", func() { err = m.q.Done(ctx, tk) })
	m.h.Record("worker", what, m.describe(err, "done"))
	mt := m.tickets[tk]
	switch {
	case cancelled:
		if !errors.Is(err, context.Canceled) {
			m.seq.Fatalf("%s = %v, want an error wrapping context.Canceled, and nothing done or counted (R13)", what, err)
		}
	case mt == nil || mt.done:
		if !errors.Is(err, task.ErrUnknownTicket) {
			why := "no Take handed it out"
			if mt != nil {
				why = "its job is done already"
			}
			m.seq.Fatalf("%s = %v, want an error wrapping ErrUnknownTicket: %s (R10)", what, err, why)
		}
	case err != nil:
		m.seq.Fatalf("%s, the ticket of %s taken and not done, = %v, want nil (R10)", what, mt.job.job.ID, err)
	default:
		mt.done = true
		latency := m.now().Sub(mt.job.enqueued)
		m.want.Completed++
		m.want.LastLatency = latency
		m.want.MaxLatency = max(m.want.MaxLatency, latency)
	}
}

// stepRelease lets a held claim answer as drawn.
func (m *bpModel) stepRelease(t *rapid.T) {
	s := m.pick(t, func(s *submit) bool { return !s.waiting })
	if s == nil {
		m.stepSubmit(t)
		return
	}
	plan := rapid.SampledFrom([]claimPlan{claimOK, claimOK, claimDown, claimFullErr}).Draw(t, "claim answers")
	m.h.Record("claim store", fmt.Sprintf("Claim(%s, %s) answers", show(s.tenant), show(s.key)), plan.String())
	m.quiet = false
	s.release <- plan
	m.quiesce()
	if !s.call.Returned() && !s.call.Settle() {
		m.seq.Fatalf("%s did not return once its claim answered, want it to return at once (R5, R6)", s.what())
	}
	m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
	_, _, _, claimErr := m.claimsOf(s)
	m.finished(s, claimErr)
	m.remove(s)
	if claimErr != nil {
		m.resolve("the failed claim gave its place back")
	} else {
		m.resolve("the claim succeeded")
	}
}

// stepCancel cancels the context of a Submit in progress.
func (m *bpModel) stepCancel(t *rapid.T) {
	s := m.pick(t, func(s *submit) bool { return !s.cancelled })
	if s == nil {
		m.stepSubmit(t)
		return
	}
	s.cancelled = true
	m.quiet = false
	s.cancel()
	m.h.Record("test", fmt.Sprintf("cancel the context of %s", s.what()), "")
	if !s.waiting {
		m.resolve("the context of a Submit whose claim is in progress was cancelled")
		return
	}
	m.quiesce()
	if !s.call.Returned() {
		m.seq.Fatalf("%s, waiting for room, did not return when its context was cancelled, want an error wrapping context.Canceled at once (R4)", s.what())
	}
	m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
	if !errors.Is(s.err, context.Canceled) || errors.Is(s.err, task.ErrQueueFull) {
		m.seq.Fatalf("%s, waiting for room, = %v once its context was cancelled, want an error wrapping context.Canceled, not ErrQueueFull, and not counted as a rejection (R4, R8)", s.what(), s.err)
	}
	m.remove(s)
	m.resolve("a waiting Submit's context was cancelled")
}

// stepAdvance moves the clock to a nanosecond before, exactly to, or a
// nanosecond after the end of a waiting Submit's wait, or by a drawn
// duration.
func (m *bpModel) stepAdvance(t *rapid.T) {
	var d time.Duration
	how := rapid.SampledFrom([]string{"before", "at", "after", "by"}).Draw(t, "advance")
	s := m.pick(t, func(s *submit) bool { return s.waiting })
	switch {
	case how == "by" || s == nil:
		d = rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Second, time.Hour, 400 * 24 * time.Hour}).Draw(t, "by")
	default:
		d = s.end.Sub(m.now())
		switch how {
		case "before":
			d -= time.Nanosecond
		case "after":
			d += time.Nanosecond
		}
	}
	if d <= 0 {
		d = time.Nanosecond // a nanosecond before is now: the instant itself comes next
	}
	fakeclock.Advance(d)
	m.quiet = true // Advance returns once every goroutine is durably blocked
	m.h.Note("%v pass (t=%s)", d, fakeclock.Elapsed())
	m.quiesce()
	now := m.now()
	for _, s := range append([]*submit(nil), m.open...) {
		if !s.waiting {
			continue
		}
		if now.Before(s.end) {
			if s.call.Returned() {
				m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
				if claims, _, _, _ := m.claimsOf(s); claims > 0 || s.err == nil {
					m.seq.Fatalf("%s, waiting for room, was admitted (%v) while no place was freed, want it to wait on (R4)", s.what(), s.err)
				}
				m.seq.Fatalf("%s, waiting for room since %s, = %v at %s, want it to wait until %s, not a nanosecond less (R4: MaxWait %v counts from its own start, and a wakeup that finds no room does not start it again)", s.what(), m.at(s.start), s.err, m.at(now), m.at(s.end), m.opts.MaxWait)
			}
			continue
		}
		if !s.call.Returned() {
			m.h.Record(s.actor(), s.what(), "still waiting")
			m.seq.Fatalf("%s, waiting for room, has not returned at %s, want it to give up at %s: MaxWait %v from its own start, or its context's deadline, whichever is first (R4)", s.what(), m.at(now), m.at(s.end), m.opts.MaxWait)
		}
		m.h.Record(s.actor(), s.what()+" returns", m.describe(s.err, "admitted"))
		if claims, _, _, _ := m.claimsOf(s); claims > 0 {
			m.seq.Fatalf("%s claimed its key while no place was freed for it, want it refused at %s (R4, R5)", s.what(), m.at(s.end))
		}
		if s.ctxWins {
			why := "its context's deadline comes first"
			if s.deadline.Equal(s.start.Add(m.opts.MaxWait)) {
				why = "MaxWait ends at the very instant of its context's deadline, and the context wins, every time"
			}
			if !errors.Is(s.err, context.DeadlineExceeded) || errors.Is(s.err, task.ErrQueueFull) {
				m.seq.Fatalf("%s, waiting for room, = %v at %s, want an error wrapping context.DeadlineExceeded, not ErrQueueFull, and not counted: %s (R4, R8)", s.what(), s.err, m.at(s.end), why)
			}
		} else {
			m.refused(s, m.noRoom(s.tenant), "after MaxWait "+m.opts.MaxWait.String())
		}
		m.remove(s)
	}
	m.resolve(fmt.Sprintf("%v passed", d))
}

// stepStats reads Stats: checked after every step anyway, it is recorded
// here.
func (m *bpModel) stepStats(t *rapid.T) {
	m.h.Record("dashboard", "Stats()", m.stats().String())
}

func (m *bpModel) stats() task.AdmissionStats {
	var s task.AdmissionStats
	m.quick("Stats()", "a slow claim holds up no Stats, and neither does a Submit waiting for room (R5, R14)", func() { s = m.q.Stats() })
	return s
}

// checkStats compares Stats with the model after every step (R8, R9, R10).
func (m *bpModel) checkStats(t *rapid.T) {
	if m.cl != nil {
		m.cl.mu.Lock()
		stray := m.cl.stray
		m.cl.mu.Unlock()
		if len(stray) > 0 {
			m.seq.Fatalf("the claim store was called with %v, for no Submit in progress, want one claim per job admitted, made by its Submit (R5)", stray)
		}
	}
	got := m.stats()
	want := m.want
	want.Depth = len(m.jobs)
	for _, tk := range m.tickets {
		if !tk.done {
			want.InFlight++
		}
	}
	if len(m.jobs) > 0 {
		want.OldestAge = m.now().Sub(m.jobs[0].enqueued)
	}
	if got == want {
		return
	}
	m.h.Record("dashboard", "Stats()", got.String())
	var rule string
	switch {
	case got.Depth != want.Depth:
		rule = fmt.Sprintf("Depth %d, want %d: the jobs waiting, not a place reserved by a claim in progress (R8)", got.Depth, want.Depth)
	case got.InFlight != want.InFlight:
		rule = fmt.Sprintf("InFlight %d, want %d: the jobs taken and not done (R8)", got.InFlight, want.InFlight)
	case got.Rejected != want.Rejected:
		rule = fmt.Sprintf("Rejected %d, want %d: the Submits refused for want of a place, with ErrQueueFull or ErrTenantFull, and no others, not a context's error nor a failed claim (R8)", got.Rejected, want.Rejected)
	case got.Completed != want.Completed:
		rule = fmt.Sprintf("Completed %d, want %d: the jobs done (R8, R10)", got.Completed, want.Completed)
	case got.OldestAge != want.OldestAge:
		rule = fmt.Sprintf("OldestAge %v, want %v: now minus the Enqueued of the oldest job waiting, zero when none waits (R9)", got.OldestAge, want.OldestAge)
	case got.LastLatency != want.LastLatency:
		rule = fmt.Sprintf("LastLatency %v, want %v: from its Enqueued to its Done, for the job done last (R10)", got.LastLatency, want.LastLatency)
	default:
		rule = fmt.Sprintf("MaxLatency %v, want %v: the longest latency since New (R10)", got.MaxLatency, want.MaxLatency)
	}
	m.seq.Fatalf("Stats() = %s, want %s: %s", got, want, rule)
}

// modelBacklogs and modelRates are the forecasts' inputs: every pair of
// valid rates gives a recovery a float64 holds to the nanosecond.
var (
	modelBacklogs = []int{0, 1, 12_000, math.MaxInt, -1}
	modelRates    = []float64{0, 80, 100, 120, math.NaN(), math.Inf(1), math.Inf(-1), -1, -math.SmallestNonzeroFloat64}
)

// stepForecast checks the backlog arithmetic (R11, R12).
func (m *bpModel) stepForecast(t *rapid.T) {
	backlog := rapid.SampledFrom(modelBacklogs).Draw(t, "backlog")
	arrival := rapid.SampledFrom(modelRates).Draw(t, "arrival")
	capacity := rapid.SampledFrom(modelRates).Draw(t, "capacity")
	what := fmt.Sprintf("ForecastBacklog(%d, %g, %g)", backlog, arrival, capacity)
	var f task.BacklogForecast
	var err error
	m.quick(what, "arithmetic", func() { f, err = m.e.forecast(backlog, arrival, capacity) })
	m.h.Record("planner", what, m.describe(err, f.String()))
	valid := func(r float64) bool { return r >= 0 && !math.IsInf(r, 1) }
	if backlog < 0 || !valid(arrival) || !valid(capacity) {
		if !errors.Is(err, task.ErrInvalidRate) {
			m.seq.Fatalf("%s = %+v, %v, want an error wrapping ErrInvalidRate: a negative backlog, or a rate that is negative, NaN or infinite, is refused first, an empty backlog too (R12)", what, f, err)
		}
		return
	}
	want := task.BacklogForecast{Growth: arrival - capacity}
	switch {
	case backlog == 0:
	case capacity <= arrival:
		want.Never = true
	default:
		ns := float64(backlog) / (capacity - arrival) * float64(time.Second)
		want.Recovery = time.Duration(math.MaxInt64)
		if ns < float64(math.MaxInt64) {
			want.Recovery = time.Duration(ns)
		}
	}
	if err != nil || f.Growth != want.Growth || f.Never != want.Never || !nearly(f.Recovery, want.Recovery) {
		m.seq.Fatalf("%s = %+v, %v, want %+v, nil (R11)", what, f, err, want)
	}
}

// finish lets every Submit in progress end, so that a sequence's
// goroutines end before its bubble does: held claims answer, contexts are
// cancelled, and places are made and the clock moved for a queue that
// ignores them.
func (m *bpModel) finish() {
	for _, s := range m.all {
		select {
		case s.release <- claimQuietEnd:
		default:
		}
	}
	for _, c := range m.cancels {
		c()
	}
	for range 100 {
		waiting := false
		for _, c := range m.calls {
			if !c.Returned() && !c.Settle() {
				waiting = true
			}
		}
		if !waiting {
			return
		}
		var panicked string
		c := m.goCall(func() { _, _ = m.q.Take(context.Background()) }, &panicked)
		if c.Returned() || c.Settle() {
			fakeclock.Advance(time.Hour)
		}
	}
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 60, Steps: 50, ShrinkRuns: 400}, func(seq *modelcheck.Seq, e *target) {
		opts := task.AdmissionOptions{
			Capacity:    rapid.SampledFrom(modelCapacities).Draw(seq.T, "capacity"),
			TenantLimit: rapid.SampledFrom(modelLimits).Draw(seq.T, "tenant limit"),
			MaxWait:     rapid.SampledFrom(modelMaxWaits).Draw(seq.T, "max wait"),
		}
		var cl *modelClaimer
		if rapid.IntRange(0, 5).Draw(seq.T, "no claimer") > 0 {
			cl = &modelClaimer{inFlight: map[pair]*submit{}, claimed: map[pair]bool{}}
			opts.Claimer = cl
		}
		m := &bpModel{e: e, seq: seq, h: seq.H, cl: cl, opts: opts, tickets: map[task.Ticket]*modelTicket{}}
		m.tenants = rapid.SampledFrom(modelTenants).Draw(seq.T, "tenants")
		m.cap = opts.Capacity
		if m.cap <= 0 {
			m.cap = task.DefaultQueueCapacity
		}
		m.limit = opts.TenantLimit
		if m.limit <= 0 {
			m.limit = max(1, m.cap/4)
		}
		m.limit = min(m.limit, m.cap)
		m.q = e.build(opts)
		claims := "no Claimer"
		if cl != nil {
			claims = "the suite's claim store"
		}
		m.h.Record("test", "New("+describeOptions(opts)+", "+claims+")", fmt.Sprintf("a new queue: %d places, %d per tenant", m.cap, m.limit))
		defer m.finish()
		seq.Repeat(map[string]func(*rapid.T){
			"":         m.checkStats,
			"submit":   m.stepSubmit,
			"submit2":  m.stepSubmit,
			"submit3":  m.stepSubmit,
			"submit4":  m.stepSubmit,
			"take":     m.stepTake,
			"take2":    m.stepTake,
			"done":     m.stepDone,
			"done2":    m.stepDone,
			"release":  m.stepRelease,
			"cancel":   m.stepCancel,
			"advance":  m.stepAdvance,
			"stats":    m.stepStats,
			"forecast": m.stepForecast,
		})
	})
}

// The concurrent model. Producers, workers and a dashboard call one queue
// at once, for real. An admitted Submit is two operations of the history:
// its admission (from its call to the start of its claim: the place is
// reserved then) and its queueing (from the claim's answer to its
// return). A Take that hands out a job is two operations over the same
// interval, the job leaving the queue and its place being freed, which a
// queue may do one after the other; Done and Stats are one each. The state
// is what the rules say the calls see: the jobs waiting in the order they
// were queued, the places reserved per tenant, the jobs in flight.
// A refused Submit is counted, not an operation: the rules say when a job
// must be refused, and the sequences check that; here, whatever the
// interleaving, no job may be admitted beyond the places and shares, and
// once every call has returned the counts must add up.

const (
	linRounds   = 30
	linClients  = 4
	linCalls    = 5
	linCapacity = 3
	linLimit    = 2
	linMaxJobs  = linClients * linCalls
)

var linTenants = []string{"a", "b"}

type linKind int

const (
	linReserve linKind = iota
	linEnqueue
	linTake
	linFree
	linDone
	linStats
)

type linInput struct {
	kind   linKind
	tenant int    // reserve, enqueue, free
	job    string // enqueue, done: the job's ID
}

type linOutput struct {
	job   string // take: the job handed out, "" for ErrQueueEmpty
	ok    bool   // done: nil, not ErrUnknownTicket
	stats [2]int // depth, in flight
}

// linState is comparable, as porcupine's default equality needs.
type linState struct {
	queue    [linMaxJobs]string
	n        int
	reserved [2]int
	freeing  [2]int             // places of jobs taken that their Take has not freed yet
	inFlight [linMaxJobs]string // sorted, the first nf used
	nf       int
}

// linTenantOf is the tenant of a job ID ("a:1-2").
func linTenantOf(job string) int {
	if len(job) > 0 && job[0] == 'b' {
		return 1
	}
	return 0
}

func (s linState) taken() int {
	return s.n + s.reserved[0] + s.reserved[1] + s.freeing[0] + s.freeing[1]
}

func (s linState) share(tenant int) int {
	n := s.reserved[tenant] + s.freeing[tenant]
	for _, j := range s.queue[:s.n] {
		if linTenantOf(j) == tenant {
			n++
		}
	}
	return n
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(linState), input.(linInput)
		switch in.kind {
		case linReserve:
			if s.taken() >= linCapacity || s.share(in.tenant) >= linLimit {
				return false, s
			}
			s.reserved[in.tenant]++
			return true, s
		case linEnqueue:
			if s.reserved[in.tenant] == 0 {
				return false, s
			}
			s.reserved[in.tenant]--
			s.queue[s.n] = in.job
			s.n++
			return true, s
		case linTake:
			out := output.(linOutput)
			if out.job == "" {
				return s.n == 0, s
			}
			if s.n == 0 || s.queue[0] != out.job {
				return false, s
			}
			copy(s.queue[:], s.queue[1:s.n])
			s.n--
			s.queue[s.n] = ""
			i := s.nf
			for i > 0 && s.inFlight[i-1] > out.job {
				s.inFlight[i] = s.inFlight[i-1]
				i--
			}
			s.inFlight[i] = out.job
			s.nf++
			s.freeing[linTenantOf(out.job)]++
			return true, s
		case linFree:
			if s.freeing[in.tenant] == 0 {
				return false, s
			}
			s.freeing[in.tenant]--
			return true, s
		case linDone:
			out := output.(linOutput)
			at := -1
			for i, j := range s.inFlight[:s.nf] {
				if j == in.job {
					at = i
				}
			}
			if !out.ok {
				return at < 0, s
			}
			if at < 0 {
				return false, s
			}
			copy(s.inFlight[at:], s.inFlight[at+1:s.nf])
			s.nf--
			s.inFlight[s.nf] = ""
			return true, s
		}
		out := output.(linOutput)
		return out.stats == [2]int{s.n, s.nf}, s
	},
}

// linClaimer claims at once, after yielding the processor a few times to
// widen the window between a Submit's admission and its queueing, and
// records the logical times of each claim's start and answer.
type linClaimer struct {
	rec    *modelcheck.Recorder
	mu     sync.Mutex
	starts map[string]int64
	ends   map[string]int64
	calls  map[string]int
}

func (c *linClaimer) Claim(ctx context.Context, tenant, key string) error {
	start := c.rec.Now()
	for range 3 {
		runtime.Gosched()
	}
	end := c.rec.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[key]++
	c.starts[key], c.ends[key] = start, end
	return nil
}

// linCounts are what the clients of a round observed, for the counts
// Stats must give once they are all done.
type linCounts struct{ admitted, refused, taken, done atomic.Int64 }

// linPlan is one call a client makes.
type linPlan struct {
	kind   linKind // linReserve stands for a Submit
	tenant int
}

// linOdd collects answers no state allows whatever the interleaving (an
// error the rules never give, a job changed, a ticket handed out twice):
// they fail a round without a history, and the least is reported, the
// same on every run.
type linOdd struct {
	mu   sync.Mutex
	msgs []string
}

func (o *linOdd) add(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, fmt.Sprintf(format, args...))
}

func (o *linOdd) first() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.msgs) == 0 {
		return ""
	}
	return slices.Min(o.msgs)
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
		plans := make([][]linPlan, linClients)
		for c := range plans {
			for range linCalls {
				p := linPlan{kind: linReserve, tenant: rng.IntN(2)}
				switch r := rng.IntN(20); {
				case r < 5:
					p.kind = linTake
				case r < 8:
					p.kind = linDone
				case r < 10:
					p.kind = linStats
				}
				plans[c] = append(plans[c], p)
			}
		}
		rec := &modelcheck.Recorder{}
		cl := &linClaimer{rec: rec, starts: map[string]int64{}, ends: map[string]int64{}, calls: map[string]int{}}
		var odd linOdd
		var tickets sync.Map // task.Ticket -> job ID
		var n linCounts
		sh := suites.NewHistory()
		fresh(t, sh, func(t *testing.T, e *target) {
			q := e.build(task.AdmissionOptions{Capacity: linCapacity, TenantLimit: linLimit, Claimer: cl})
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, plan := range plans {
				wg.Go(func() {
					<-start
					suites.Guard(t, func() { linClient(q, rec, cl, &odd, &tickets, &n, c, plan) })
				})
			}
			close(start)
			wg.Wait()
			if odd.first() != "" {
				return
			}
			// Once every call has returned, the counts add up exactly.
			got := q.Stats()
			want := task.AdmissionStats{Depth: int(n.admitted.Load() - n.taken.Load()), InFlight: int(n.taken.Load() - n.done.Load()),
				Rejected: n.refused.Load(), Completed: n.done.Load()}
			if got.Depth != want.Depth || got.InFlight != want.InFlight || got.Rejected != want.Rejected || got.Completed != want.Completed {
				odd.add("once every call returned, Stats() = depth %d, in flight %d, rejected %d, completed %d, want depth %d, in flight %d, rejected %d, completed %d: %d jobs admitted, %d refused, %d taken and %d done (R8, R14)",
					got.Depth, got.InFlight, got.Rejected, got.Completed, want.Depth, want.InFlight, want.Rejected, want.Completed,
					n.admitted.Load(), n.refused.Load(), n.taken.Load(), n.done.Load())
			}
		})
		if t.Failed() {
			return
		}
		if msg := odd.first(); msg != "" {
			t.Errorf("round %d: %s", round+1, msg)
			return
		}
		histories = append(histories, rec.Ops())
	}
	modelcheck.Linearizable(t, h, linModel, nil, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

// linClient makes one client's calls and records them.
func linClient(q Queue, rec *modelcheck.Recorder, cl *linClaimer, odd *linOdd, tickets *sync.Map, n *linCounts, client int, plan []linPlan) {
	ctx := context.Background()
	var mine []task.Admitted // the jobs this client took, for its Dones
	for i, p := range plan {
		switch p.kind {
		case linReserve:
			tenant := linTenants[p.tenant]
			key := fmt.Sprintf("%d-%d", client+1, i+1)
			id := tenant + ":" + key
			job := task.Task{ID: id, Account: "acct-" + tenant, DocumentID: "contract-" + key}
			action := fmt.Sprintf("Submit(%s, %s)", tenant, key)
			call := rec.Now()
			err := q.Submit(ctx, tenant, key, job)
			ret := rec.Now()
			cl.mu.Lock()
			claims, claimStart, claimEnd := cl.calls[key], cl.starts[key], cl.ends[key]
			cl.mu.Unlock()
			switch {
			case err == nil:
				if claims != 1 {
					odd.add("%s = nil after %d claims of its key, want it admitted and claimed once (R5)", action, claims)
					return
				}
				n.admitted.Add(1)
				rec.Add(modelcheck.Op{Client: client, Call: call, Return: claimStart, Input: linInput{kind: linReserve, tenant: p.tenant},
					Action: "calls " + action, Outcome: action + ": admitted, its claim starts"})
				rec.Add(modelcheck.Op{Client: client, Call: claimEnd, Return: ret, Input: linInput{kind: linEnqueue, tenant: p.tenant, job: id},
					Action: action + ": its key is claimed", Outcome: action + " returns nil: queued"})
			case errors.Is(err, task.ErrQueueFull):
				if claims != 0 {
					odd.add("%s = %v but claimed its key, want a refused job's key left unclaimed (R5)", action, err)
					return
				}
				// Not an operation of the history: a Submit refused may
				// have held a place or its tenant's share for a moment (a
				// queue may take one and then find no room for the other),
				// and that moment is nowhere in what it returns. It is
				// counted, for the Stats of the round's end.
				n.refused.Add(1)
			default:
				odd.add("%s = %v, want nil, ErrQueueFull or ErrTenantFull: the claim store always succeeds here (R2, R5, R7)", action, err)
				return
			}
		case linTake:
			call := rec.Now()
			a, err := q.Take(ctx)
			ret := rec.Now()
			out := linOutput{}
			outcome := fmt.Sprintf("Take() = %v", err)
			switch {
			case err == nil:
				want := task.Task{ID: a.Job.ID, Account: "acct-" + a.Tenant, DocumentID: "contract-" + a.Key}
				if a.Job != want || a.Job.ID != a.Tenant+":"+a.Key {
					odd.add("Take() = %s with job %+v, want the job unchanged, with its own tenant and key (R3)", a, a.Job)
					return
				}
				if a.Ticket == 0 {
					odd.add("Take() = %s with ticket 0, want a ticket that is not zero (R3)", a)
					return
				}
				if other, dup := tickets.LoadOrStore(a.Ticket, a.Job.ID); dup {
					odd.add("Take() = %s with ticket %d, which another Take handed out with %s, want a ticket no other Take had (R3)", a.Job.ID, a.Ticket, other)
					return
				}
				out.job = a.Job.ID
				n.taken.Add(1)
				mine = append(mine, a)
				outcome = fmt.Sprintf("Take() = %s (ticket %d)", a.Job.ID, a.Ticket)
			case errors.Is(err, task.ErrQueueEmpty):
			default:
				odd.add("Take() = %v, want a job or ErrQueueEmpty (R3)", err)
				return
			}
			rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linTake}, Output: out,
				Action: "calls Take()", Outcome: outcome})
			if out.job != "" {
				// Its place is freed at some instant of the same call, not
				// necessarily the one the job left the queue at.
				rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linFree, tenant: linTenantOf(out.job)},
					Action: "Take() frees the place of " + out.job, Outcome: "Take(): the place of " + out.job + " is free"})
			}
		case linDone:
			if len(mine) == 0 {
				continue
			}
			// Its latest job; done a second time when it was done already.
			a := mine[len(mine)-1]
			action := fmt.Sprintf("Done(ticket %d of %s)", a.Ticket, a.Job.ID)
			call := rec.Now()
			err := q.Done(ctx, a.Ticket)
			ret := rec.Now()
			if err != nil && !errors.Is(err, task.ErrUnknownTicket) {
				odd.add("%s = %v, want nil or ErrUnknownTicket (R10)", action, err)
				return
			}
			if err == nil {
				n.done.Add(1)
			}
			rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linDone, job: a.Job.ID}, Output: linOutput{ok: err == nil},
				Action: "calls " + action, Outcome: fmt.Sprintf("%s = %v", action, err)})
		case linStats:
			call := rec.Now()
			s := q.Stats()
			ret := rec.Now()
			rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{kind: linStats},
				Output: linOutput{stats: [2]int{s.Depth, s.InFlight}},
				Action: "calls Stats()", Outcome: fmt.Sprintf("Stats() = depth %d, in flight %d, rejected %d, completed %d", s.Depth, s.InFlight, s.Rejected, s.Completed)})
		}
	}
}
