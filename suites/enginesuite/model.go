package enginesuite

import (
	"cmp"
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
	gocmp "github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
	"github.com/fourth-outcome/labkit/task"
)

// The model case. The model is what the test knows about each job from
// what it observed: never stored, or queued, leased, done or dead, with
// the contents it was stored with, its deliveries, its checkpoint, the
// token of its latest lease, the instant it is visible from (or its lease
// ends), its last error and its reason; and, for the whole backend, the
// greatest token granted so far. The capacity follows from the jobs.
//
// When a Redis command's reply is lost after Redis carried it out, the
// test cannot know whether the operation took effect; and when a Lease
// comes to a used-up job and a deliverable one that became visible at the
// same instant, it may dead-letter the used-up one or leave it for later
// (R8). So the model keeps every state the backend may be in (a branch
// each), and every observation keeps the branches it agrees with, as
// redissuite's check does. The model says what any call must observe,
// never how a backend gets there.

// modelIDGroups are groups of job IDs drawn to collide in every way a
// backend may merge two of them: a trailing space and case; IDs that one
// joined to a number or a field name without a separator would make
// ("a" and "1" against "a1", "j" and ":lease" against "j:lease"); IDs that
// are the names of a backend's other keys; invalid UTF-8 that a
// conversion to []rune or JSON turns into U+FFFD, and U+FFFD itself; a NUL
// and the empty ID (invalid); and two IDs of 300 bytes that differ in
// their last byte. A sequence works on one group and one plain ID, so that
// its calls meet on the same jobs again and again.
var modelIDGroups = [][]string{
	{"job-1", "job-1 ", "Job-1"},
	{"a1", "a", "a10"},
	{"j", "j:lease", "j:steps"},
	{"due", "token", "job:due"},
	{"\xff", "\xfe", "\ufffd"},
	{"", "\x00", " "},
	{strings.Repeat("L", 299) + "1", strings.Repeat("L", 299) + "2"},
}

// variantNames say how each variant of a job differs from the first:
// every ID has the same variants, and a sequence submits them in any
// order, so that any of them may be the one stored.
var variantNames = []string{
	"",
	" with another account",
	" with its steps swapped",
	" with one byte of a document ID changed",
	" with no steps",
	" with its first step only",
}

// variant returns the v-th variant of the job with the given ID; its
// strings hold bytes that are not UTF-8, a NUL and U+FFFD.
func variant(id string, v int) task.Job {
	steps := []task.Step{
		{DocumentID: "doc-0", Recipient: "ana@example.com", Subject: "please sign"},
		{DocumentID: "doc-1-\xff", Recipient: "bo@example.com\x00", Subject: "sign: \ufffd"},
	}
	j := task.Job{ID: id, Account: "acct", Steps: steps}
	switch v {
	case 1:
		j.Account = "acct-2"
	case 2:
		j.Steps = []task.Step{steps[1], steps[0]}
	case 3:
		j.Steps[1].DocumentID = "doc-1-\xfe"
	case 4:
		j.Steps = nil
	case 5:
		j.Steps = steps[:1]
	}
	return j
}

// modelWorkers are the workers that lease.
var modelWorkers = []string{"worker 1", "worker 2", "worker 3"}

// modelCauses are the causes Fail is given: a retryable one, two that wrap
// ErrPermanent (one through two layers), one whose text is the sentinel's
// without wrapping it (a retry), one with bytes that are not UTF-8, and
// one with no text at all.
var modelCauses = []error{
	errors.New("provider unavailable"),
	fmt.Errorf("step 1: %w: recipient is not an email address", task.ErrPermanent),
	fmt.Errorf("send: %w", fmt.Errorf("%w: bad request", task.ErrPermanent)),
	errors.New("permanent failure"),
	errors.New("timeout \xff\x00 \ufffd"),
	errors.New(""),
}

// modelOptions are the Options a sequence's backend is built with: small
// capacities and delivery counts, so that ErrFull and dead-lettering come
// up; a backoff that reaches its cap within the deliveries; and zero
// options, which mean the defaults (R2, R3, R7, R8). All are whole
// milliseconds.
var modelOptions = []Options{
	{Capacity: 2, VisibilityTimeout: 10 * time.Second, MaxDeliveries: 2, BaseBackoff: 1500 * time.Millisecond, MaxBackoff: 4 * time.Second},
	{Capacity: 3, VisibilityTimeout: 2500 * time.Millisecond, MaxDeliveries: 3, BaseBackoff: 250 * time.Millisecond, MaxBackoff: 700 * time.Millisecond},
	{Capacity: 3, VisibilityTimeout: 2 * time.Second, MaxDeliveries: 1},
	{Capacity: 1, MaxDeliveries: 1},
	{},
}

// jobRec is one job in one possible state of the backend.
type jobRec struct {
	id         string
	variant    int
	state      task.JobState
	deliveries int
	step       int
	token      task.Token // the latest lease's token (0 before any)
	unknown    bool       // the latest lease's reply was lost: its token is above token
	until      time.Duration
	lastErr    string
	reason     task.DeadLetterReason
}

func (r jobRec) unfinished() bool { return r.state == task.JobQueued || r.state == task.JobLeased }

// branch is one possible state of the backend.
type branch struct {
	jobs []jobRec   // by ID
	top  task.Token // the greatest token granted, as far as the test knows
}

func (b branch) get(id string) (jobRec, bool) {
	i, ok := slices.BinarySearchFunc(b.jobs, id, func(r jobRec, id string) int { return strings.Compare(r.id, id) })
	if !ok {
		return jobRec{}, false
	}
	return b.jobs[i], true
}

// with returns b with r stored (a copy: branches share nothing).
func (b branch) with(r jobRec) branch {
	jobs := slices.Clone(b.jobs)
	i, ok := slices.BinarySearchFunc(jobs, r.id, func(r jobRec, id string) int { return strings.Compare(r.id, id) })
	if ok {
		jobs[i] = r
	} else {
		jobs = slices.Insert(jobs, i, r)
	}
	return branch{jobs: jobs, top: b.top}
}

// unfinished counts the jobs that take room (R2).
func (b branch) unfinished() int {
	n := 0
	for _, r := range b.jobs {
		if r.unfinished() {
			n++
		}
	}
	return n
}

// deadLettered returns b with the jobs ids dead-lettered by a Lease (R8).
func (b branch) deadLettered(ids []string) branch {
	for _, id := range ids {
		r, _ := b.get(id)
		r.state, r.reason, r.until = task.JobDead, task.ReasonMaxDeliveries, 0
		b = b.with(r)
	}
	return b
}

func (b branch) key() string { return fmt.Sprintf("%v|%d", b.jobs, b.top) }

// obs is what a call returned.
type obs struct {
	ok    bool
	err   error
	lease task.JobLease
	info  task.JobInfo
	desc  string
}

// outcome is one outcome the model allows a call in one branch, and the
// state it leaves.
type outcome struct {
	want  string // what the call returns, as a message says it
	why   string
	match func(o obs) bool
	next  func(o obs) branch
	blind branch   // the state the call leaves when it took effect and its reply was lost
	dead  []string // Lease: the used-up jobs it dead-letters
}

// errKind sorts an error into the kinds the model speaks of: nil, "ctx",
// a sentinel's name, "redis" (the suite's injected failure, and none of
// the lab's sentinels) or "other".
func errKind(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, context.Canceled):
		return "ctx"
	}
	if name := sentinelOf(err); name != "" {
		return name
	}
	if errors.Is(err, errInjected) {
		return "redis"
	}
	return "other"
}

// errOutcome is an outcome that returns an error of the given kind (and,
// from Submit, false) and leaves b.
func errOutcome(kind, prefix string, b branch, why string) outcome {
	want := "an error wrapping " + kind
	switch kind {
	case "ctx":
		want = "an error wrapping context.Canceled"
	case "redis":
		want = "an error wrapping Redis's and none of the lab's sentinels"
	case "other":
		want = "an error of the backend's own"
	}
	return outcome{want: prefix + want, why: why, blind: b,
		match: func(o obs) bool { return !o.ok && errKind(o.err) == kind },
		next:  func(obs) branch { return b }}
}

// faultKind is what the test does to one call.
type faultKind int

const (
	noFault   faultKind = iota
	cancelled           // the caller's context is done before the call
	failCmd             // Redis fails the call's k-th command before it reaches the server
	loseCmd             // Redis carries out the call's k-th command, and its reply is lost
)

// callFault is what the test does to one call: a kind, and the command
// it strikes.
type callFault struct {
	kind faultKind
	k    int64
}

func (f callFault) String() string {
	switch f.kind {
	case cancelled:
		return " with a cancelled context"
	case failCmd:
		return fmt.Sprintf(" with Redis failing its command %d", f.k)
	case loseCmd:
		return fmt.Sprintf(" with the reply to its command %d lost after Redis carried it out", f.k)
	}
	return ""
}

// engineModel is one sequence: the backend, what the test knows of it,
// and the leases the test holds.
type engineModel struct {
	w        *world
	seq      *modelcheck.Seq
	st       *store
	procs    []*proc
	restarts int

	capacity, maxDeliveries int
	vis, base, maxBackoff   time.Duration

	ids    []string
	now    time.Duration // the backend's clock, since fakeclock.Epoch
	states []branch
	held   map[string][]task.JobLease // per job, in the order granted; a checkpointed lease is replaced by the one Checkpoint returned
}

// tnow is now as the backend keeps it, to the millisecond (R11).
func (m *engineModel) tnow() time.Duration { return m.now.Truncate(time.Millisecond) }

// backoff is R7's delay after the n-th delivery failed.
func (m *engineModel) backoff(n int) time.Duration {
	d := m.base
	for i := 1; i < n && d < m.maxBackoff; i++ {
		d *= 2
	}
	return min(d, m.maxBackoff)
}

// check keeps the branches that allow what the call observed, or fails the
// sequence if none does. gen gives the outcomes a call without a fault
// may have in a branch.
func (m *engineModel) check(what string, o obs, f callFault, prefix string, gen func(b branch) []outcome) {
	m.seq.Helper()
	var next []branch
	var allowed []outcome
	const redisWhy = "Redis's error is returned, wrapped, never an answer about the jobs in its place, and a failed operation leaves the data in Redis as it was (R14)"
	for _, b := range m.states {
		var ocs []outcome
		switch f.kind {
		case cancelled:
			ocs = []outcome{errOutcome("ctx", prefix, b, "a call with a done context returns an error wrapping the context's error and changes nothing (R14)")}
		case failCmd, loseCmd:
			ocs = []outcome{errOutcome("redis", prefix, b, redisWhy)}
			for _, oc := range gen(b) {
				if f.kind == loseCmd {
					ocs = append(ocs, errOutcome("redis", prefix, oc.blind, "the reply was lost after Redis carried the command out: the operation returns Redis's error, wrapped, and either took effect or not (R14)"))
				}
				if f.k > 1 {
					// A Lease that dead-letters each used-up job in a
					// transaction of its own (WATCH, MULTI/EXEC) may have
					// dead-lettered some when a later command fails: a
					// later Lease would have dead-lettered them anyway.
					for _, sub := range subsets(oc.dead) {
						ocs = append(ocs, errOutcome("redis", prefix, b.deadLettered(sub), redisWhy))
					}
				}
			}
		default:
			ocs = gen(b)
		}
		for _, oc := range ocs {
			if oc.match(o) {
				next = append(next, oc.next(o))
			}
			allowed = append(allowed, oc)
		}
	}
	if len(next) == 0 {
		var alts []string
		for _, oc := range allowed {
			if !slices.Contains(alts, oc.want) {
				alts = append(alts, oc.want)
			}
		}
		m.seq.Fatalf("%s = %s, want %s: %s", what, o.desc, strings.Join(alts, ", or "), allowed[0].why)
	}
	seen := map[string]bool{}
	m.states = m.states[:0:0]
	for _, b := range next {
		if k := b.key(); !seen[k] {
			seen[k] = true
			m.states = append(m.states, b)
		}
	}
}

// subsets returns every subset of ids but the empty one.
func subsets(ids []string) [][]string {
	var out [][]string
	for mask := 1; mask < 1<<len(ids); mask++ {
		var s []string
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				s = append(s, id)
			}
		}
		out = append(out, s)
	}
	return out
}

// showID quotes an ID for a message, abbreviating a long one.
func showID(id string) string {
	if len(id) > 40 {
		return fmt.Sprintf("%+q…%+q (%d bytes)", id[:8], id[len(id)-2:], len(id))
	}
	return strconv.QuoteToASCII(id)
}

func (m *engineModel) drawID(t *rapid.T) string { return rapid.SampledFrom(m.ids).Draw(t, "job") }

func (m *engineModel) drawProc(t *rapid.T) *proc {
	return m.procs[rapid.IntRange(0, len(m.procs)-1).Draw(t, "process")]
}

// drawFault draws what happens to a call: mostly nothing; a cancelled
// context; on Redis, a command failing or its reply lost (only while the
// model keeps few branches, so that it stays small).
func (m *engineModel) drawFault(t *rapid.T) callFault {
	n := rapid.IntRange(0, 11).Draw(t, "fault")
	k := rapid.SampledFrom([]int64{1, 1, 1, 2, 3, 5}).Draw(t, "command")
	switch {
	case n == 8:
		return callFault{kind: cancelled}
	case m.w.kind != redisKind:
	case n == 9 || n == 10:
		return callFault{kind: failCmd, k: k}
	case n == 11 && len(m.states) <= 8:
		return callFault{kind: loseCmd, k: k}
	}
	return callFault{}
}

// arm prepares p for f and returns the context to call with.
func (m *engineModel) arm(p *proc, f callFault) context.Context {
	switch f.kind {
	case cancelled:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	case failCmd:
		p.hk.failNext(f.k)
	case loseCmd:
		p.hk.loseNext(f.k)
	}
	return context.Background()
}

// disarm ends f on p and returns the fault that happened: none if the call
// sent fewer commands than the one armed.
func (m *engineModel) disarm(p *proc, f callFault) callFault {
	if f.kind != failCmd && f.kind != loseCmd {
		return f
	}
	p.hk.disarm()
	if !p.hk.failed.Load() {
		return callFault{}
	}
	return f
}

// record records a call in the sequence's history, saying so when an
// armed fault was not reached.
func (m *engineModel) record(p *proc, what string, armed, f callFault, desc string) string {
	if armed.kind != noFault && f.kind == noFault {
		desc += fmt.Sprintf(" (it sent fewer than %d commands: no fault)", armed.k)
	}
	m.w.h.Record(p.name, what+f.String(), desc)
	return what + f.String()
}

// scribble edits a job the caller holds, as a caller may: the backend's
// copy must not change with it (R3, R10).
func scribble(j *task.Job) {
	if len(j.Steps) > 0 {
		j.Steps[0].Subject = "edited by the caller after the call"
	}
}

func cloneJob(j task.Job) task.Job {
	j.Steps = slices.Clone(j.Steps)
	return j
}

// storedVariant returns the variant of id some branch stores.
func (m *engineModel) storedVariant(id string) (int, bool) {
	for _, b := range m.states {
		if r, ok := b.get(id); ok {
			return r.variant, true
		}
	}
	return 0, false
}

// stepSubmit submits a variant of a drawn job: mostly the one stored, so
// that duplicates happen.
func (m *engineModel) stepSubmit(t *rapid.T) {
	p := m.drawProc(t)
	id := m.drawID(t)
	v := 0
	if rapid.IntRange(0, 2).Draw(t, "as stored") == 0 {
		v = rapid.IntRange(0, len(variantNames)-1).Draw(t, "variant")
	} else if sv, ok := m.storedVariant(id); ok {
		v = sv
	}
	armed := m.drawFault(t)
	j := cloneJob(variant(id, v))
	ctx := m.arm(p, armed)
	ok, err := p.b.Submit(ctx, j)
	f := m.disarm(p, armed)
	scribble(&j)
	o := obs{ok: ok, err: err, desc: fmt.Sprintf("%v, %s", ok, describeErr(err))}
	what := m.record(p, fmt.Sprintf("Submit(%s%s)", showID(id), variantNames[v]), armed, f, o.desc)
	now := m.tnow()
	m.check(what, o, f, "false, ", func(b branch) []outcome {
		if id == "" || len(j.Steps) == 0 {
			return []outcome{errOutcome("ErrInvalidJob", "false, ", b, "a job with an empty ID or no steps is ErrInvalidJob, and nothing of it is stored (R1)")}
		}
		r, stored := b.get(id)
		full := b.unfinished() >= m.capacity
		switch {
		case stored && r.variant == v:
			return []outcome{{want: "false, <nil>", blind: b,
				why:   fmt.Sprintf("a job submitted before with the same account and steps is a duplicate whether it is queued, leased, done or dead (this one is %s), answered even when the backend is full, and nothing changes (R1, R2)", r.state),
				match: func(o obs) bool { return !o.ok && o.err == nil }, next: func(obs) branch { return b }}}
		case stored:
			why := "the same ID with another account or other steps (or the same steps in another order, or bytes that differ) is ErrConflict, and nothing changes (R1)"
			ocs := []outcome{errOutcome("ErrConflict", "false, ", b, why)}
			if full {
				ocs = append(ocs, errOutcome("ErrFull", "false, ", b, why))
			}
			return ocs
		case full:
			return []outcome{errOutcome("ErrFull", "false, ", b, fmt.Sprintf("%d of Capacity %d jobs are unfinished (queued or leased, a lease that ended included until a Lease settles it): a new job is ErrFull and nothing of it is stored (R2)", b.unfinished(), m.capacity))}
		}
		nb := b.with(jobRec{id: id, variant: v, state: task.JobQueued, until: now})
		return []outcome{{want: "true, <nil>", blind: nb,
			why:   "a new job is stored, visible at once, while fewer than Capacity jobs are unfinished; done and dead jobs take no room, and no other ID may answer for it (R1, R2)",
			match: func(o obs) bool { return o.ok && o.err == nil }, next: func(obs) branch { return nb }}}
	})
}

// stepLease leases for a drawn worker.
func (m *engineModel) stepLease(t *rapid.T) {
	p := m.drawProc(t)
	worker := rapid.SampledFrom(modelWorkers).Draw(t, "worker")
	armed := m.drawFault(t)
	ctx := m.arm(p, armed)
	l, err := p.b.Lease(ctx, worker)
	f := m.disarm(p, armed)
	kept := l
	kept.Job = cloneJob(l.Job)
	scribble(&l.Job)
	o := obs{lease: kept, err: err, desc: describeLease(kept, err)}
	if err == nil && !m.asSubmitted(kept.Job) {
		o.desc += fmt.Sprintf(" (its job is %+q, which was never submitted)", kept.Job)
	}
	what := m.record(p, fmt.Sprintf("Lease(%q)", worker), armed, f, o.desc)
	now := m.tnow()
	m.check(what, o, f, "", func(b branch) []outcome {
		var visible []jobRec
		for _, r := range b.jobs {
			if r.unfinished() && r.until <= now {
				visible = append(visible, r)
			}
		}
		used := func(r jobRec) bool { return r.deliveries >= m.maxDeliveries }
		first := time.Duration(-1)
		for _, r := range visible {
			if !used(r) && (first < 0 || r.until < first) {
				first = r.until
			}
		}
		if first < 0 {
			var dead []string
			for _, r := range visible {
				dead = append(dead, r.id)
			}
			nb := b.deadLettered(dead)
			oc := errOutcome("ErrNoJob", "", nb, "with no visible job left to deliver, Lease returns ErrNoJob; a job whose last allowed lease ended is dead-lettered by the Lease that comes to it, and is never delivered again (R3, R8)")
			oc.dead = dead
			return []outcome{oc}
		}
		var must, maybe []string
		for _, r := range visible {
			switch {
			case !used(r):
			case r.until < first:
				must = append(must, r.id)
			case r.until == first:
				maybe = append(maybe, r.id)
			}
		}
		var out []outcome
		for _, r := range visible {
			if used(r) || r.until != first {
				continue
			}
			job := variant(r.id, r.variant)
			for _, sub := range append([][]string{nil}, subsets(maybe)...) {
				dead := append(slices.Clone(must), sub...)
				base := b.deadLettered(dead)
				blind := r
				blind.state, blind.deliveries, blind.token, blind.unknown, blind.until = task.JobLeased, r.deliveries+1, b.top, true, now+m.vis
				out = append(out, outcome{
					want: fmt.Sprintf("%s to %s (delivery %d, a token above %d, step %d), expires +%v", showID(r.id), worker, r.deliveries+1, b.top, r.step, now+m.vis),
					why:  "Lease delivers the visible job whose visibility began earliest (a queued job from its Until, a leased one from its lease's end; ties in any order), exactly as submitted, to the named worker, with one more delivery, its checkpoint as Step, a token greater than every token granted before and Expires now plus VisibilityTimeout; a used-up job that became visible before it is dead-lettered on the way (R3, R4, R6, R8)",
					match: func(o obs) bool {
						l := o.lease
						return o.err == nil && l.Token > b.top && l.Worker == worker && l.Delivery == r.deliveries+1 && l.Step == r.step &&
							l.Expires.Equal(at(now+m.vis)) && gocmp.Equal(l.Job, job)
					},
					next: func(o obs) branch {
						nr := r
						nr.state, nr.deliveries, nr.token, nr.unknown, nr.until = task.JobLeased, r.deliveries+1, o.lease.Token, false, now+m.vis
						nb := base.with(nr)
						nb.top = o.lease.Token
						return nb
					},
					blind: base.with(blind),
					dead:  dead,
				})
			}
		}
		return out
	})
	if err == nil {
		m.held[kept.Job.ID] = append(m.held[kept.Job.ID], kept)
	}
}

// asSubmitted reports whether j is a variant of its ID's job.
func (m *engineModel) asSubmitted(j task.Job) bool {
	for v := range variantNames {
		if gocmp.Equal(j, variant(j.ID, v)) {
			return true
		}
	}
	return false
}

// pickLease draws a job the test holds leases on and one of them: mostly
// the latest, sometimes an older one; now and then (and always when the
// test holds none) a forged one, whose token was never granted, on any
// job. Drawing the job, not an index among all leases, keeps each step's
// meaning when rapid removes an earlier step.
func (m *engineModel) pickLease(t *rapid.T) (l task.JobLease, i int, desc string) {
	var leased []string
	for _, id := range m.ids {
		if len(m.held[id]) > 0 {
			leased = append(leased, id)
		}
	}
	which := rapid.IntRange(0, 7).Draw(t, "which lease")
	if len(leased) == 0 || which == 0 {
		id := m.drawID(t)
		l = task.JobLease{Job: variant(id, 0), Worker: modelWorkers[0], Delivery: 1, Expires: at(m.tnow() + m.vis)}
		if ls := m.held[id]; len(ls) > 0 {
			l = ls[len(ls)-1]
		}
		l.Token = rapid.SampledFrom([]task.Token{0, -1, 1 << 40}).Draw(t, "forged token")
		return l, -1, fmt.Sprintf("%s token %d (forged: never granted)", showID(id), l.Token)
	}
	id := rapid.SampledFrom(leased).Draw(t, "leased job")
	ls := m.held[id]
	i = len(ls) - 1
	if which <= 2 {
		i = rapid.IntRange(0, len(ls)-1).Draw(t, "lease")
	}
	return ls[i], i, fmt.Sprintf("%s token %d", showID(id), ls[i].Token)
}

// current reports whether l is r's current lease at now (R5).
func current(r jobRec, l task.JobLease, now time.Duration) bool {
	return r.state == task.JobLeased && !r.unknown && r.token == l.Token && now < r.until
}

// lostWhy says why l is not r's current lease.
func lostWhy(r jobRec, stored bool, l task.JobLease, now time.Duration) string {
	const rule = "Checkpoint, Complete and Fail succeed only with the job's current lease, and otherwise return ErrLeaseLost and change nothing (R5)"
	switch {
	case !stored:
		return "the job is not stored: " + rule
	case r.unknown:
		return "a later lease of the job was granted (its reply lost): " + rule
	case r.token != l.Token:
		return fmt.Sprintf("token %d is not the job's latest (%d): %s", l.Token, r.token, rule)
	case r.state != task.JobLeased:
		return fmt.Sprintf("the lease was ended (the job is %s): %s", r.state, rule)
	}
	return fmt.Sprintf("the lease ended at +%v and the clock is at +%v: %s", r.until, now, rule)
}

// stepCheckpoint checkpoints a held lease one step forward, as Work does
// (R6: the suite calls Checkpoint with no other step).
func (m *engineModel) stepCheckpoint(t *rapid.T) {
	l, i, ldesc := m.pickLease(t)
	if l.Step >= len(l.Job.Steps) {
		// Every step is checkpointed: Work would complete the job.
		m.complete(t, l, ldesc)
		return
	}
	step := l.Step + 1
	p := m.drawProc(t)
	armed := m.drawFault(t)
	ctx := m.arm(p, armed)
	nl, err := p.b.Checkpoint(ctx, l, step)
	f := m.disarm(p, armed)
	o := obs{lease: nl, err: err, desc: describeLease(nl, err)}
	what := m.record(p, fmt.Sprintf("Checkpoint(%s, %d)", ldesc, step), armed, f, o.desc)
	now := m.tnow()
	m.check(what, o, f, "", func(b branch) []outcome {
		r, stored := b.get(l.Job.ID)
		if stored && current(r, l, now) {
			nr := r
			nr.step, nr.until = step, now+m.vis
			nb := b.with(nr)
			want := l
			want.Step, want.Expires = step, at(now+m.vis)
			return []outcome{{want: fmt.Sprintf("the same lease with step %d, expires +%v, token %d", step, now+m.vis, l.Token), blind: nb,
				why:   "the current lease records the step and is renewed from now: Checkpoint returns it with that Step, Expires now plus VisibilityTimeout and the same token (R5, R6)",
				match: func(o obs) bool { return o.err == nil && gocmp.Equal(o.lease, want) }, next: func(obs) branch { return nb }}}
		}
		ocs := []outcome{errOutcome("ErrLeaseLost", "", b, lostWhy(r, stored, l, now))}
		if stored && step < r.step {
			ocs = append(ocs, errOutcome("other", "", b, "a backend may refuse a step below the checkpoint with an error of its own (R6)"))
		}
		return ocs
	})
	if err == nil && i >= 0 {
		nl.Job = cloneJob(nl.Job)
		m.held[l.Job.ID][i] = nl
	}
}

// stepComplete completes a held lease.
func (m *engineModel) stepComplete(t *rapid.T) {
	l, _, ldesc := m.pickLease(t)
	m.complete(t, l, ldesc)
}

func (m *engineModel) complete(t *rapid.T, l task.JobLease, ldesc string) {
	p := m.drawProc(t)
	armed := m.drawFault(t)
	ctx := m.arm(p, armed)
	err := p.b.Complete(ctx, l)
	f := m.disarm(p, armed)
	o := obs{err: err, desc: describeErr(err)}
	what := m.record(p, fmt.Sprintf("Complete(%s)", ldesc), armed, f, o.desc)
	now := m.tnow()
	m.check(what, o, f, "", func(b branch) []outcome {
		r, stored := b.get(l.Job.ID)
		if stored && current(r, l, now) {
			nr := r
			nr.state, nr.until = task.JobDone, 0
			nb := b.with(nr)
			return []outcome{{want: "<nil>", blind: nb, why: "the current lease completes the job: it is done, for good, and takes no room (R2, R5)",
				match: func(o obs) bool { return o.err == nil }, next: func(obs) branch { return nb }}}
		}
		return []outcome{errOutcome("ErrLeaseLost", "", b, lostWhy(r, stored, l, now))}
	})
}

// stepFail fails a held lease with a drawn cause.
func (m *engineModel) stepFail(t *rapid.T) {
	l, _, ldesc := m.pickLease(t)
	cause := rapid.SampledFrom(modelCauses).Draw(t, "cause")
	p := m.drawProc(t)
	armed := m.drawFault(t)
	ctx := m.arm(p, armed)
	err := p.b.Fail(ctx, l, cause)
	f := m.disarm(p, armed)
	o := obs{err: err, desc: describeErr(err)}
	what := m.record(p, fmt.Sprintf("Fail(%s, %+q)", ldesc, cause.Error()), armed, f, o.desc)
	now := m.tnow()
	m.check(what, o, f, "", func(b branch) []outcome {
		r, stored := b.get(l.Job.ID)
		if !stored || !current(r, l, now) {
			return []outcome{errOutcome("ErrLeaseLost", "", b, lostWhy(r, stored, l, now))}
		}
		nr := r
		nr.lastErr = cause.Error()
		var why string
		switch {
		case errors.Is(cause, task.ErrPermanent):
			nr.state, nr.reason, nr.until = task.JobDead, task.ReasonPermanent, 0
			why = "a Fail whose cause wraps ErrPermanent dead-letters the job at once, on any delivery, with reason \"permanent failure\" and the cause's text (R9)"
		case r.deliveries >= m.maxDeliveries:
			nr.state, nr.reason, nr.until = task.JobDead, task.ReasonMaxDeliveries, 0
			why = fmt.Sprintf("a Fail of delivery %d of MaxDeliveries %d dead-letters the job at once, with reason \"max deliveries\" and the cause's text (R8)", r.deliveries, m.maxDeliveries)
		default:
			nr.state, nr.until = task.JobQueued, now+m.backoff(r.deliveries)
			why = fmt.Sprintf("a Fail of delivery %d makes the job queued and visible again min(MaxBackoff, BaseBackoff*2^(n-1)) = %v after now, with the cause's text; a cause that only says \"permanent failure\" without wrapping ErrPermanent is retried (R7)", r.deliveries, m.backoff(r.deliveries))
		}
		nb := b.with(nr)
		return []outcome{{want: "<nil>", blind: nb, why: why,
			match: func(o obs) bool { return o.err == nil }, next: func(obs) branch { return nb }}}
	})
}

// stepInspect inspects a drawn job.
func (m *engineModel) stepInspect(t *rapid.T) {
	p := m.drawProc(t)
	id := m.drawID(t)
	armed := m.drawFault(t)
	ctx := m.arm(p, armed)
	in, err := p.b.Inspect(ctx, id)
	f := m.disarm(p, armed)
	kept := in
	kept.Job = cloneJob(in.Job)
	scribble(&in.Job)
	o := obs{info: kept, err: err, desc: showInfo(kept, err)}
	what := m.record(p, fmt.Sprintf("Inspect(%s)", showID(id)), armed, f, o.desc)
	m.check(what, o, f, "", func(b branch) []outcome {
		r, stored := b.get(id)
		if !stored {
			return []outcome{errOutcome("ErrUnknownJob", "", b, "an ID never stored (never submitted, or refused) is ErrUnknownJob; other IDs, even ones whose bytes look alike, are other jobs (R1, R10)")}
		}
		want := task.JobInfo{Job: variant(id, r.variant), State: r.state, Deliveries: r.deliveries, Step: r.step, Token: r.token, LastError: r.lastErr, Reason: r.reason}
		if r.unfinished() {
			want.Until = at(r.until)
		}
		desc := showInfo(want, nil)
		if r.unknown {
			desc = strings.Replace(desc, fmt.Sprintf("token %d", r.token), fmt.Sprintf("a token above %d", r.token), 1)
		}
		return []outcome{{want: desc,
			why: "Inspect reports the job as submitted, byte for byte, its state, deliveries, checkpoint, the token of its latest lease, Until (when a queued job becomes visible, when a leased job's lease ends, even one that ended and that no Lease has settled yet; zero for done and dead jobs), the last error and the reason (R10, and R8: a job whose last lease ended is dead-lettered only by a Lease)",
			match: func(o obs) bool {
				if o.err != nil {
					return false
				}
				got := o.info
				if r.unknown {
					if got.Token <= r.token {
						return false
					}
					got.Token = want.Token
				}
				return gocmp.Equal(got, want)
			},
			next: func(o obs) branch {
				if !r.unknown {
					return b
				}
				nr := r
				nr.token, nr.unknown = o.info.Token, false
				nb := b.with(nr)
				nb.top = max(nb.top, o.info.Token)
				return nb
			},
			blind: b}}
	})
}

func showInfo(in task.JobInfo, err error) string {
	if err != nil {
		return describeErr(err)
	}
	s := in.String()
	if !in.Until.IsZero() {
		s += fmt.Sprintf(" until +%v", in.Until.Sub(at(0)))
	}
	return s + fmt.Sprintf(", job %+q", in.Job)
}

// stepAdvance moves the clock to just before, exactly to or just after an
// instant the model knows (a queued job's visibility, a lease's end), or
// by 0.7 ms (so that the backend must truncate it, R11), a second, an hour
// or thirty days.
func (m *engineModel) stepAdvance(t *rapid.T) {
	var targets []time.Duration
	for _, b := range m.states {
		for _, r := range b.jobs {
			if !r.unfinished() {
				continue
			}
			for _, d := range []time.Duration{-time.Millisecond, 0, time.Millisecond} {
				if at := r.until + d; at > m.now && !slices.Contains(targets, at) {
					targets = append(targets, at)
				}
			}
		}
	}
	slices.Sort(targets)
	for _, d := range []time.Duration{700 * time.Microsecond, time.Second, time.Hour, 30 * 24 * time.Hour} {
		targets = append(targets, m.now+d)
	}
	to := rapid.SampledFrom(targets).Draw(t, "advance to")
	m.w.advance(to - m.now)
	m.now = to
}

// stepRestart replaces a process by a new one: a new client and a new
// backend value on the same server and namespace (R13). The leases the
// test holds stay valid: they are values, and the tokens are in Redis.
func (m *engineModel) stepRestart(t *rapid.T) {
	i := rapid.IntRange(0, len(m.procs)-1).Draw(t, "process")
	old := m.procs[i]
	_ = old.rdb.Close()
	m.restarts++
	m.procs[i] = m.st.proc(fmt.Sprintf("process %c (restart %d)", 'A'+i, m.restarts))
	m.w.h.Record(old.name, "process restarts", "a new client and a new Redis value on the same namespace")
	if outside := m.st.keysOutside(); len(outside) > 0 {
		m.seq.Fatalf("keys outside the namespace %q: %q, want every key the backend writes to start with the namespace followed by \":\", so that a restarted process finds all of it there and two namespaces share nothing (R13)", m.st.ns, outside)
	}
}

// stepRestartOrFlush restarts a process, or flushes Redis's script cache
// (on the suite's own server only: a real server's scripts are not only
// the suite's).
func (m *engineModel) stepRestartOrFlush(t *rapid.T) {
	if rapid.Bool().Draw(t, "flush") && m.w.virtual {
		m.stepFlushScripts(t)
		return
	}
	m.stepRestart(t)
}

// stepFlushScripts empties Redis's script cache, as a restarted or
// failed-over server has.
func (m *engineModel) stepFlushScripts(t *rapid.T) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := m.w.inspect.Do(ctx, "SCRIPT", "FLUSH").Err(); err != nil {
		m.seq.Fatalf("the suite's SCRIPT FLUSH = %v", err)
	}
	m.w.h.Note("SCRIPT FLUSH: Redis forgets every loaded script (the next EVALSHA gets NOSCRIPT)")
}

// checkModelSequences is the model case on one backend kind.
func checkModelSequences(kind string) func(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	return func(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
		cfg := modelcheck.Config{Sequences: 100, Steps: 30, ShrinkRuns: 1000}
		if kind == redisKind {
			// Every script call on miniredis starts a Lua interpreter of
			// its own: fewer sequences keep the case under a second with
			// -race.
			cfg.Sequences = 32
		}
		modelcheck.Sequences(t, h, fresh, cfg, func(seq *modelcheck.Seq, tg *target) {
			w := newWorld(tg.t, seq.H, tg, kind)
			o := rapid.SampledFrom(modelOptions).Draw(seq.T, "options")
			m := &engineModel{w: w, seq: seq, held: map[string][]task.JobLease{}, states: []branch{{}},
				capacity: cmp.Or(o.Capacity, task.DefaultCapacity), maxDeliveries: cmp.Or(o.MaxDeliveries, task.DefaultJobMaxDeliveries),
				vis: cmp.Or(o.VisibilityTimeout, task.DefaultJobVisibility), base: cmp.Or(o.BaseBackoff, task.DefaultBaseBackoff),
				maxBackoff: cmp.Or(o.MaxBackoff, task.DefaultMaxBackoff)}
			m.ids = append([]string{"order-1"}, rapid.SampledFrom(modelIDGroups).Draw(seq.T, "group")...)
			w.h.Note("=== the %s backend, options %s; the sequence works on jobs %s ===", kind, showOptions(o), showIDs(m.ids))
			m.st = w.newStore(o)
			m.procs = []*proc{m.st.proc("process A"), m.st.proc("process B")}
			// rapid draws a step's name uniformly: Submit and Lease have
			// two names each, so that jobs and leases come up early.
			steps := map[string]func(*rapid.T){
				"submit":     m.stepSubmit,
				"submit 2":   m.stepSubmit,
				"lease":      m.stepLease,
				"lease 2":    m.stepLease,
				"checkpoint": m.stepCheckpoint,
				"complete":   m.stepComplete,
				"fail":       m.stepFail,
				"inspect":    m.stepInspect,
				"advance":    m.stepAdvance,
			}
			if kind == redisKind {
				steps["restart or flush"] = m.stepRestartOrFlush
			}
			seq.Repeat(steps)
		})
	}
}

func showIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = showID(id)
	}
	return strings.Join(out, ", ")
}

// The concurrent model. Clients (goroutines on memory, processes with a
// client each on Redis) call Submit, Lease, Checkpoint, Complete, Fail and
// Inspect at once, for real, on a backend whose clock stands still, so
// that no lease ends and no backoff is over while a round runs: every job
// is visible from the instant it was submitted until it is leased, and a
// failed one is invisible again. A report (Checkpoint, Complete, Fail) may
// use any lease some client received, so that two reports of one lease
// race.
//
// What each call returned must be explained by the calls taking effect one
// at a time. Per job, a partition of its own: a new job is stored once, a
// duplicate finds it stored, a lease takes it only while it is visible and
// counts the delivery, a report succeeds only with the latest token of a
// lease not yet ended, and Inspect sees one of those states. Across jobs,
// one more partition: a job is accepted only while fewer than Capacity
// are unfinished and ErrFull only when none is free, and a Lease finds
// ErrNoJob only when no job is visible. The tokens are checked directly: a
// lease's token is greater than that of every lease that returned before
// it was called, and no two leases share one.

const (
	linRounds  = 16
	linClients = 3
	linCalls   = 5
)

// linJobs are the IDs of the jobs a round works on: few, so that calls
// meet on them.
var linJobs = []string{"job-1", "job-2", "job-3"}

// linOptions are a round's options: Capacity 2 of three jobs, so that
// ErrFull comes up; MaxDeliveries 1 (a Fail dead-letters the job) or 2 (a
// Fail queues it behind a backoff).
func linOptions(round int) Options {
	return Options{Capacity: 2, VisibilityTimeout: 10 * time.Second, MaxDeliveries: 1 + round%2}
}

type linOpKind int

const (
	linSubmit linOpKind = iota
	linLease
	linCheckpoint
	linComplete
	linFail
	linInspect
)

// linJobInput is an operation on one job; linGlobalInput is its shadow in
// the partition across jobs.
type linJobInput struct {
	id    string
	kind  linOpKind
	token task.Token // Lease: the token it got; reports: the lease's
	step  int        // Checkpoint: the step; Lease: the Step it got
	deliv int        // Lease: the Delivery it got; Fail: the lease's
	perm  bool       // Fail: the cause wraps ErrPermanent
	max   int        // Fail: the backend's MaxDeliveries
}

type linJobOutput struct {
	result string // Submit: created, duplicate, full; reports: ok, lost; Inspect: unknown, or the state
	info   task.JobInfo
}

type linGlobalInput struct {
	kind     linOpKind
	result   string // Submit: created, full; Lease: got, none; Complete and Fail: ended
	capacity int
}

type linJobState struct {
	stored     bool
	state      task.JobState
	visible    bool
	deliveries int
	token      task.Token
	step       int
}

type linGlobalState struct{ unfinished, visible int }

// linModel checks both kinds of partition: each holds inputs of one kind
// only, and starts from Init.
var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s := state.(linState)
		switch in := input.(type) {
		case linGlobalInput:
			ok, g := linGlobalStep(s.global, in)
			s.global = g
			return ok, s
		case linJobInput:
			ok, j := linJobStep(s.job, in, output.(linJobOutput))
			s.job = j
			return ok, s
		}
		return false, s
	},
}

type linState struct {
	job    linJobState
	global linGlobalState
}

func linGlobalStep(s linGlobalState, in linGlobalInput) (bool, linGlobalState) {
	switch {
	case in.kind == linSubmit && in.result == "created":
		return s.unfinished < in.capacity, linGlobalState{s.unfinished + 1, s.visible + 1}
	case in.kind == linSubmit:
		return s.unfinished >= in.capacity, s
	case in.kind == linLease && in.result == "got":
		return s.visible > 0, linGlobalState{s.unfinished, s.visible - 1}
	case in.kind == linLease:
		return s.visible == 0, s
	}
	return s.unfinished > 0, linGlobalState{s.unfinished - 1, s.visible}
}

func linJobStep(s linJobState, in linJobInput, out linJobOutput) (bool, linJobState) {
	holds := s.stored && s.state == task.JobLeased && s.token == in.token
	switch in.kind {
	case linSubmit:
		switch out.result {
		case "created":
			return !s.stored, linJobState{stored: true, state: task.JobQueued, visible: true}
		case "duplicate":
			return s.stored, s
		}
		return !s.stored, s // full: the count is the other partition's
	case linLease:
		ok := s.stored && s.state == task.JobQueued && s.visible && in.deliv == s.deliveries+1 && in.step == s.step
		return ok, linJobState{stored: true, state: task.JobLeased, deliveries: s.deliveries + 1, token: in.token, step: s.step}
	case linCheckpoint:
		if out.result != "ok" {
			return !holds, s
		}
		n := s
		n.step = in.step
		return holds, n
	case linComplete:
		if out.result != "ok" {
			return !holds, s
		}
		n := s
		n.state = task.JobDone
		return holds, n
	case linFail:
		if out.result != "ok" {
			return !holds, s
		}
		n := s
		n.state, n.visible = task.JobQueued, false
		if in.perm || s.deliveries >= in.max {
			n.state = task.JobDead
		}
		return holds, n
	}
	if out.result == "unknown" {
		return !s.stored, s
	}
	in2 := out.info
	return s.stored && in2.State == s.state && in2.Deliveries == s.deliveries && in2.Token == s.token && in2.Step == s.step, s
}

// linPartition puts each job's operations in a partition of their own, and
// the operations across jobs in one more.
func linPartition(ops []modelcheck.Op) [][]modelcheck.Op {
	byJob := map[string][]modelcheck.Op{}
	var global []modelcheck.Op
	for _, op := range ops {
		switch in := op.Input.(type) {
		case linJobInput:
			byJob[in.id] = append(byJob[in.id], op)
		case linGlobalInput:
			global = append(global, op)
		}
	}
	var out [][]modelcheck.Op
	for _, id := range linJobs {
		out = append(out, byJob[id])
	}
	return append(out, global)
}

// linPlan is one call a client makes.
type linPlan struct {
	kind linOpKind
	id   string
	pick int // a report: which of the leases received so far
	perm bool
}

// linRun is one round's shared state.
type linRun struct {
	t      *testing.T
	o      Options
	now    time.Time
	rec    modelcheck.Recorder
	odd    oddAnswers
	mu     sync.Mutex
	leases []receivedLease // every lease received, in the order received
}

// receivedLease is a lease a client received, with the logical times of its
// call and return.
type receivedLease struct {
	l         task.JobLease
	call, ret int64
	client    int
}

func checkModelLinearizable(kind string) func(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
	return func(t *testing.T, h *suites.History, fresh suites.Fresh[*target]) {
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
					p := linPlan{id: linJobs[rng.IntN(len(linJobs))], pick: rng.IntN(4), perm: rng.IntN(3) == 0}
					switch n := rng.IntN(20); {
					case n < 7:
						p.kind = linSubmit
					case n < 12:
						p.kind = linLease
					case n < 14:
						p.kind = linCheckpoint
					case n < 16:
						p.kind = linComplete
					case n < 18:
						p.kind = linFail
					default:
						p.kind = linInspect
					}
					plans[c] = append(plans[c], p)
				}
			}
			o := linOptions(round)
			r := &linRun{o: o}
			fresh(t, suites.NewHistory(), func(_ *testing.T, tg *target) {
				w := newWorld(tg.t, suites.NewHistory(), tg, kind)
				r.t, r.now = tg.t, w.clock.Now()
				st := w.newStore(o)
				procs := make([]*proc, linClients)
				for c := range procs {
					procs[c] = st.proc(fmt.Sprintf("client %d", c+1))
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				for c, plan := range plans {
					wg.Go(func() {
						<-start
						for _, p := range plan {
							r.call(procs[c].b, c, p)
						}
					})
				}
				close(start)
				wg.Wait()
			})
			if t.Failed() {
				return
			}
			if msg := r.odd.first(); msg != "" {
				t.Errorf("round %d: %s", round+1, msg)
				return
			}
			if msg := r.tokens(); msg != "" {
				t.Errorf("round %d: %s", round+1, msg)
				return
			}
			histories = append(histories, r.rec.Ops())
		}
		modelcheck.Linearizable(t, h, linModel, linPartition, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
	}
}

// call makes one planned call and records it as one or two operations.
func (r *linRun) call(b Backend, client int, p linPlan) {
	ctx := context.Background()
	worker := fmt.Sprintf("client %d", client+1)
	jobOp := func(call, ret int64, in linJobInput, out linJobOutput, action, outcome string) {
		r.rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Output: out, Action: "calls " + action, Outcome: action + " = " + outcome})
	}
	globalOp := func(call, ret int64, in linGlobalInput, action, outcome string) {
		in.capacity = r.o.Capacity
		r.rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: in, Action: "calls " + action, Outcome: action + " = " + outcome})
	}
	var held task.JobLease
	if p.kind == linCheckpoint || p.kind == linComplete || p.kind == linFail {
		r.mu.Lock()
		if len(r.leases) == 0 {
			p.kind = linInspect
		} else {
			held = r.leases[p.pick%len(r.leases)].l
		}
		r.mu.Unlock()
	}
	switch p.kind {
	case linSubmit:
		var ok bool
		var err error
		call := r.rec.Now()
		suites.Guard(r.t, func() { ok, err = b.Submit(ctx, variant(p.id, 0)) })
		ret := r.rec.Now()
		action := fmt.Sprintf("Submit(%q)", p.id)
		outcome := fmt.Sprintf("%v, %s", ok, describeErr(err))
		var res string
		switch {
		case ok && err == nil:
			res = "created"
		case !ok && err == nil:
			res = "duplicate"
		case !ok && errors.Is(err, task.ErrFull):
			res = "full"
		default:
			r.odd.add(fmt.Sprintf("%s = %s: no state of the backend allows that answer, want true, <nil>, false, <nil> or false, ErrFull (R1, R2)", action, outcome))
			return
		}
		jobOp(call, ret, linJobInput{id: p.id, kind: linSubmit}, linJobOutput{result: res}, action, outcome)
		if res != "duplicate" {
			globalOp(call, ret, linGlobalInput{kind: linSubmit, result: res}, action, outcome)
		}
	case linLease:
		var l task.JobLease
		var err error
		call := r.rec.Now()
		suites.Guard(r.t, func() { l, err = b.Lease(ctx, worker) })
		ret := r.rec.Now()
		action := fmt.Sprintf("Lease(%q)", worker)
		outcome := describeLease(l, err)
		switch {
		case errors.Is(err, task.ErrNoJob):
			globalOp(call, ret, linGlobalInput{kind: linLease, result: "none"}, action, outcome)
			return
		case err != nil:
			r.odd.add(fmt.Sprintf("%s = %s: no state of the backend allows that answer, want a lease or ErrNoJob (R3)", action, outcome))
			return
		case !slices.Contains(linJobs, l.Job.ID) || !gocmp.Equal(l.Job, variant(l.Job.ID, 0)):
			r.odd.add(fmt.Sprintf("%s = %s with job %+q, want a job exactly as submitted (R3)", action, outcome, l.Job))
			return
		case l.Worker != worker || !l.Expires.Equal(r.now.Add(r.o.VisibilityTimeout)):
			r.odd.add(fmt.Sprintf("%s = %s (worker %q), want the lease to %q, expiring at now plus VisibilityTimeout, +%v (R3)", action, outcome, l.Worker, worker, r.now.Add(r.o.VisibilityTimeout).Sub(at(0))))
			return
		}
		jobOp(call, ret, linJobInput{id: l.Job.ID, kind: linLease, token: l.Token, step: l.Step, deliv: l.Delivery}, linJobOutput{}, action, outcome)
		globalOp(call, ret, linGlobalInput{kind: linLease, result: "got"}, action, outcome)
		r.mu.Lock()
		r.leases = append(r.leases, receivedLease{l: l, call: call, ret: ret, client: client})
		r.mu.Unlock()
	case linCheckpoint, linComplete, linFail:
		var err error
		var nl task.JobLease
		cause := errors.New("provider unavailable")
		if p.perm {
			cause = fmt.Errorf("%w: invalid recipient", task.ErrPermanent)
		}
		var action string
		call := r.rec.Now()
		switch p.kind {
		case linCheckpoint:
			action = fmt.Sprintf("Checkpoint(%s token %d, 1)", held.Job.ID, held.Token)
			suites.Guard(r.t, func() { nl, err = b.Checkpoint(ctx, held, 1) })
		case linComplete:
			action = fmt.Sprintf("Complete(%s token %d)", held.Job.ID, held.Token)
			suites.Guard(r.t, func() { err = b.Complete(ctx, held) })
		default:
			action = fmt.Sprintf("Fail(%s token %d, %q)", held.Job.ID, held.Token, cause)
			suites.Guard(r.t, func() { err = b.Fail(ctx, held, cause) })
		}
		ret := r.rec.Now()
		outcome := describeErr(err)
		res := "ok"
		switch {
		case errors.Is(err, task.ErrLeaseLost):
			res = "lost"
		case err != nil:
			r.odd.add(fmt.Sprintf("%s = %s: no state of the backend allows that answer, want <nil> or ErrLeaseLost (R5)", action, outcome))
			return
		case p.kind == linCheckpoint:
			want := held
			want.Step, want.Expires = 1, r.now.Add(r.o.VisibilityTimeout)
			outcome = describeLease(nl, nil)
			if !gocmp.Equal(nl, want) {
				r.odd.add(fmt.Sprintf("%s = %s, want the same lease with step 1, expires +%v (R6)", action, outcome, want.Expires.Sub(at(0))))
				return
			}
		}
		in := linJobInput{id: held.Job.ID, kind: p.kind, token: held.Token, step: 1, deliv: held.Delivery, perm: p.perm, max: r.o.MaxDeliveries}
		jobOp(call, ret, in, linJobOutput{result: res}, action, outcome)
		if res == "ok" && (p.kind == linComplete || p.kind == linFail && (p.perm || held.Delivery >= r.o.MaxDeliveries)) {
			globalOp(call, ret, linGlobalInput{kind: p.kind, result: "ended"}, action, outcome)
		}
	case linInspect:
		var info task.JobInfo
		var err error
		call := r.rec.Now()
		suites.Guard(r.t, func() { info, err = b.Inspect(ctx, p.id) })
		ret := r.rec.Now()
		action := fmt.Sprintf("Inspect(%q)", p.id)
		outcome := showInfo(info, err)
		out := linJobOutput{result: "unknown"}
		switch {
		case errors.Is(err, task.ErrUnknownJob):
		case err != nil:
			r.odd.add(fmt.Sprintf("%s = %s: no state of the backend allows that answer, want the job or ErrUnknownJob (R10)", action, outcome))
			return
		case !gocmp.Equal(info.Job, variant(p.id, 0)):
			r.odd.add(fmt.Sprintf("%s = %s, want the job exactly as submitted (R10)", action, outcome))
			return
		default:
			out = linJobOutput{result: string(info.State), info: info}
		}
		jobOp(call, ret, linJobInput{id: p.id, kind: linInspect}, out, action, outcome)
	}
}

// tokens checks the round's leases against R4: a lease's token is greater
// than the token of every lease that returned before it was called, and no
// two leases share a token. It returns what it found wrong, or "".
func (r *linRun) tokens() string {
	for i, a := range r.leases {
		for j, b := range r.leases {
			switch {
			case i == j:
			case a.l.Token == b.l.Token:
				return fmt.Sprintf("two leases carry token %d (%s and %s), want every token greater than every token granted before (R4)", a.l.Token, a.l, b.l)
			case a.ret < b.call && a.l.Token > b.l.Token:
				return fmt.Sprintf("Lease() = %s returned before another Lease() was called, which got %s: want the later lease's token greater than every token granted before (R4)", a.l, b.l)
			}
		}
	}
	return ""
}

// oddAnswers collects answers that no state of the backend allows,
// whatever the interleaving: they fail a round without a history, and the
// one reported (the least) is the same on every run.
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
