package redissuite

import (
	"cmp"
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

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
)

// The model case. The model is what the test knows about each (tenant,
// key) from what it observed: free, pending (with its fingerprint, the
// claim that holds it, and when it expires) or done (with its fingerprint,
// its result and when it expires). When Redis failed a command after
// carrying it out, the test cannot know whether the command took effect,
// so a pair may have two possible states; the next observation on that
// pair keeps the ones it agrees with. The model says what any call must
// observe, never how a store gets there.

// modelPairs are groups of (tenant, key) pairs drawn to collide in every
// way a store may merge two of them: joined without a separator, with a
// ":" or with an escape; invalid UTF-8 that a conversion to []rune or
// JSON turns into U+FFFD, and U+FFFD itself; case and spaces; and the
// limits, counted in bytes (128 for a tenant, 256 for a key), with the
// invalid pairs beyond them. A sequence works on one group and one plain
// pair, so that its calls meet on the same records again and again.
var modelPairs = [][]pair{
	{{"a", "bc"}, {"ab", "c"}},
	{{"t:x", "k"}, {"t", "x:k"}},
	{{`a\`, "b:c"}, {`a:b\`, "c"}},
	{{"acme", "\xff"}, {"acme", "\xfe"}, {"acme", "\ufffd"}},
	{{"\xff", "k"}, {"\ufffd", "k"}},
	{{"acme", "k"}, {"Acme", "k"}, {"acme", "K"}, {"acme", "k "}},
	{{strings.Repeat("é", 64), "k"}, {strings.Repeat("é", 64) + "x", "k"}},
	{{"acme", strings.Repeat("\U0001F600", 64)}, {"acme", strings.Repeat("\U0001F600", 64) + "x"}},
	{{"", "k"}, {"acme", ""}, {"acme\x00", "k"}, {"acme", "k\x00"}},
}

var (
	modelFingerprints = []string{"fp:doc-42", "fp:doc-43", "", "\xff", "\ufffd", "fp\x00nul", "fp:doc-42 "}
	modelResults      = []string{"", " signed \n", "ok\xff\xfe", "\ufffd", "a|b:c\n\"q\" \\", "nul\x00byte", strings.Repeat("0123456789abcdef", 4500)}
)

// modelOptions are the Options a sequence's stores are built with: TTLs
// that are not whole seconds (so that one rounded to seconds shows), and
// zero ones, which mean the defaults (R6).
var modelOptions = []Options{
	{ClaimTTL: 2500 * time.Millisecond, Retention: 61500 * time.Millisecond},
	{},
	{Retention: 61500 * time.Millisecond},
	{ClaimTTL: 2500 * time.Millisecond},
}

// errModelWork is what a failing work returns in the model case.
var errModelWork = errors.New("signing provider declined (the work's own error)")

func validPair(p pair) bool {
	ok := func(s string, limit int) bool { return s != "" && len(s) <= limit && !strings.Contains(s, "\x00") }
	return ok(p.tenant, 128) && ok(p.key, 256)
}

type pair struct{ tenant, key string }

func (p pair) String() string { return show(p.tenant) + ", " + show(p.key) }

type recKind int

const (
	free recKind = iota
	pending
	done
)

// rec is one possible state of a pair.
type rec struct {
	kind    recKind
	fp      string
	holder  int // pending: the id of the claim that holds it (0: nobody the test knows)
	result  string
	expires time.Duration // since the sequence started
}

// heldClaim is a claim a Claim call returned to the test.
type heldClaim struct {
	id   int
	proc int
	pair pair
	fp   string
	c    any
}

// observed is what a call returned, sorted into the kinds the model
// speaks of.
type observed struct {
	kind  string // see want
	value string
	ran   int
	desc  string
}

// want is one outcome the model allows, and the state it leaves.
type want struct {
	kind  string // value, replay, held, inProgress, mismatch, invalid, lost, ok, workErr, workErr+lost, redis, ctx
	value string // value, replay, lost
	ran   int
	next  rec
	why   string
}

func (w want) String() string {
	var s string
	switch w.kind {
	case "value":
		s = fmt.Sprintf("%s, nil", show(w.value))
	case "replay":
		s = fmt.Sprintf("a nil error and Record{Done: true, Result: %s}", show(w.value))
	case "held":
		s = "a held claim and a nil error"
	case "inProgress":
		s = "an error wrapping ErrInProgress"
	case "mismatch":
		s = "an error wrapping ErrFingerprintMismatch"
	case "invalid":
		s = "an error wrapping ErrInvalidKey"
	case "lost":
		s = "an error wrapping ErrClaimLost"
		if w.ran > 0 {
			s = fmt.Sprintf("%s with an error wrapping ErrClaimLost", show(w.value))
		}
	case "ok":
		s = "nil"
	case "workErr":
		s = "an error wrapping the work's own error"
	case "workErr+lost":
		s = "an error wrapping both the work's error and ErrClaimLost"
	case "redis":
		s = "an error wrapping Redis's and none of the lab's sentinels"
	case "ctx":
		s = "an error wrapping context.Canceled and none of the lab's sentinels"
	}
	switch w.ran {
	case 0:
		return s + " (the work not run)"
	case 1:
		return s + " (the work run once)"
	}
	return s
}

func (w want) matches(o observed) bool {
	if o.ran != w.ran {
		return false
	}
	switch {
	case o.kind == "nil" && (w.kind == "held" || w.kind == "replay"):
		return true // the lab's Record cannot be read: a nil error is either
	case o.kind != w.kind:
		return false
	case w.kind == "value" || w.kind == "replay" || (w.kind == "lost" && w.ran > 0):
		return o.value == w.value
	}
	return true
}

// fault is what the test does to one call.
type fault int

const (
	noFault    fault = iota
	cancelled        // the caller's context is cancelled before the call
	failFirst        // Redis fails the call's first command before it reaches the server
	loseFirst        // Redis carries out the first command, and its reply is lost
	failSecond       // Claim: Redis fails the call's second command, if it sends one
)

var faultNames = map[fault]string{
	cancelled:  "with a cancelled context",
	failFirst:  "with Redis failing its first command",
	loseFirst:  "with the reply to its first command lost after Redis carried it out",
	failSecond: "with Redis failing its second command, if it sends one",
}

type redisModel struct {
	e        *env
	seq      *modelcheck.Seq
	o        Options       // the stores' options
	ttl, ret time.Duration // what they mean
	pairs    []pair        // the pairs this sequence works on
	now      time.Duration
	recs     map[pair][]rec // possible states; a pair not here is free
	used     []pair
	procs    []*proc
	restarts int
	claims   []*heldClaim
	nextID   int
}

// modelOptions returns the Options of the model's stores on a real
// server: TTLs long enough that nothing expires while a sequence runs,
// since real time cannot be stepped to the millisecond.
func (e *env) modelOptions() Options {
	return Options{Prefix: e.prefix, ClaimTTL: time.Minute, Retention: time.Hour}
}

// states returns the possible states of p now: a record past its expiry is
// free, and one that expires exactly now may be either.
func (m *redisModel) states(p pair) []rec {
	rs, ok := m.recs[p]
	if !ok {
		return []rec{{}}
	}
	var out []rec
	for _, r := range rs {
		switch {
		case r.kind == free || m.now < r.expires:
			out = append(out, r)
		case m.now == r.expires:
			out = append(out, r, rec{})
		default:
			out = append(out, rec{})
		}
	}
	return dedupe(out)
}

func dedupe(rs []rec) []rec {
	var out []rec
	for _, r := range rs {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// check keeps the states of p that allow what was observed, or fails the
// sequence if none does.
// A call that runs no work (Claim, Complete, Release) has ran -1 in what
// it observed and in every want.
func (m *redisModel) check(p pair, what string, o observed, wants func(st rec) []want) {
	m.seq.Helper()
	var next []rec
	var allowed []want
	for _, st := range m.states(p) {
		for _, w := range wants(st) {
			if o.ran < 0 {
				w.ran = -1
			}
			if w.matches(o) {
				next = append(next, w.next)
			}
			allowed = append(allowed, w)
		}
	}
	if len(next) == 0 {
		var alts []string
		for _, w := range allowed {
			if s := w.String(); !slices.Contains(alts, s) {
				alts = append(alts, s)
			}
		}
		m.seq.Fatalf("%s = %s, want %s: %s", what, o.desc, strings.Join(alts, ", or "), allowed[0].why)
	}
	m.recs[p] = dedupe(next)
}

// classify sorts what a call returned into the kinds the model speaks of.
func (m *redisModel) classify(v string, err error, ran int) observed {
	errs := m.e.tg.errs
	o := observed{value: v, ran: ran, desc: m.e.describe(v, err)}
	switch {
	case err == nil:
		o.kind = "value"
	case errors.Is(err, errModelWork) && errors.Is(err, errs.ClaimLost):
		o.kind = "workErr+lost"
	case errors.Is(err, errModelWork):
		o.kind = "workErr"
	case errors.Is(err, errs.InProgress):
		o.kind = "inProgress"
	case errors.Is(err, errs.FingerprintMismatch):
		o.kind = "mismatch"
	case errors.Is(err, errs.InvalidKey):
		o.kind = "invalid"
	case errors.Is(err, errs.ClaimLost):
		o.kind = "lost"
	case errors.Is(err, errInjected):
		o.kind = "redis"
	case errors.Is(err, context.Canceled):
		o.kind = "ctx"
	default:
		o.kind = "other"
	}
	return o
}

func (m *redisModel) drawPair(t *rapid.T) pair {
	p := rapid.SampledFrom(m.pairs).Draw(t, "pair")
	if !slices.Contains(m.used, p) {
		m.used = append(m.used, p)
	}
	return p
}

// drawFingerprint draws the fingerprint of p's record, mostly, so that
// replays and duplicates happen.
func (m *redisModel) drawFingerprint(t *rapid.T, p pair) string {
	for _, r := range m.states(p) {
		if r.kind != free && rapid.IntRange(0, 3).Draw(t, "same fingerprint") > 0 {
			return r.fp
		}
	}
	return rapid.SampledFrom(modelFingerprints).Draw(t, "fingerprint")
}

func (m *redisModel) drawFault(t *rapid.T) fault {
	switch n := rapid.IntRange(0, 9).Draw(t, "fault"); n {
	case 7:
		return cancelled
	case 8:
		return failFirst
	case 9:
		return loseFirst
	}
	return noFault
}

func (m *redisModel) drawProc(t *rapid.T) (int, *proc) {
	i := rapid.IntRange(0, len(m.procs)-1).Draw(t, "process")
	return i, m.procs[i]
}

// arm prepares p for f and returns the context to call with.
func (m *redisModel) arm(p *proc, f fault) context.Context {
	p.failAt.Store(0)
	p.loseAt.Store(0)
	switch f {
	case cancelled:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	case failFirst:
		p.failNext(1)
	case loseFirst:
		p.loseNext(1)
	case failSecond:
		p.failNext(2)
	}
	return context.Background()
}

func disarm(p *proc) {
	p.failAt.Store(0)
	p.loseAt.Store(0)
}

// faulted returns what a call on a valid pair under fault f must give,
// given the states it leaves if its first command did (effect) or did not
// take effect.
func faulted(f fault, st rec, effect *rec) []want {
	switch f {
	case cancelled:
		return []want{{kind: "ctx", next: st, why: "a cancelled context is the caller's error, returned at once; nothing runs (R16)"}}
	case failFirst:
		return []want{{kind: "redis", next: st, why: "Redis's error is returned, wrapped, never disguised as an answer, and nothing runs without a claim (R16)"}}
	}
	ws := []want{{kind: "redis", next: st, why: "Redis's error is returned, wrapped, never disguised as an answer, and nothing runs without a claim (R16)"}}
	if effect != nil {
		ws = append(ws, want{kind: "redis", next: *effect, why: ws[0].why})
	}
	return ws
}

// stepDo calls Do on a drawn pair, with work that succeeds or fails, and
// may outlive its claim.
func (m *redisModel) stepDo(t *rapid.T) {
	_, p := m.drawProc(t)
	pr := m.drawPair(t)
	fp := m.drawFingerprint(t, pr)
	succeeds := rapid.IntRange(0, 3).Draw(t, "work succeeds") > 0
	result := rapid.SampledFrom(modelResults).Draw(t, "result")
	outlives := m.e.virtual && rapid.IntRange(0, 7).Draw(t, "work outlives its claim") == 0
	f := m.drawFault(t)
	ctx := m.arm(p, f)
	ran := 0
	work := func(context.Context) (string, error) {
		ran++
		if outlives {
			d := m.ttl + time.Millisecond
			m.e.h.Recordf(p.name, "work runs", "for %v, longer than ClaimTTL", d)
			m.advanceBy(d)
		}
		if !succeeds {
			return "", errModelWork
		}
		return result, nil
	}
	t0 := m.now
	v, err := p.store.Do(ctx, pr.tenant, pr.key, fp, work)
	disarm(p)
	o := m.classify(v, err, ran)
	switch ran {
	case 0:
		o.desc += " (the work did not run)"
	case 1:
		o.desc += " (the work ran)"
	default:
		o.desc += fmt.Sprintf(" (the work ran %d times)", ran)
	}
	what := fmt.Sprintf("Do(%s) with fingerprint %s, work %s", pr, show(fp), workDesc(succeeds, result, outlives))
	if f != noFault {
		what += " " + faultNames[f]
	}
	m.e.h.Record(p.name, what, o.desc)
	m.check(pr, what, o, func(st rec) []want {
		if !validPair(pr) {
			ws := []want{{kind: "invalid", next: st, why: "a tenant is 1 to 128 bytes and a key 1 to 256, with no NUL, and anything else is rejected before Redis is asked (R14)"}}
			if f == cancelled {
				ws = append(ws, want{kind: "ctx", next: st, why: ws[0].why})
			}
			return ws
		}
		switch {
		case f != noFault && st.kind == free:
			return faulted(f, st, &rec{kind: pending, fp: fp, expires: t0 + m.ttl})
		case f != noFault:
			return faulted(f, st, nil)
		case st.kind == pending && st.fp == fp:
			return []want{{kind: "inProgress", next: st, why: "a pending claim holds its key until ClaimTTL, to the millisecond; other pairs, even ones whose bytes look alike, are other keys (R4, R11, R12)"}}
		case st.kind != free && st.fp != fp:
			return []want{{kind: "mismatch", next: st, why: "a record with another fingerprint is refused, and fingerprints are compared byte for byte (R13)"}}
		case st.kind == done:
			return []want{{kind: "value", value: st.result, next: st, why: "a completed result is replayed byte for byte until Retention after its completion, from any process (R5, R7)"}}
		case outlives && succeeds:
			return []want{{kind: "lost", value: result, ran: 1, next: rec{}, why: "work that outlived its claim cannot store its result: Do returns the value with Complete's ErrClaimLost (R8, R15)"}}
		case outlives:
			return []want{{kind: "workErr+lost", ran: 1, next: rec{}, why: "work that failed after its claim expired: Do returns the work's error joined with Release's ErrClaimLost (R9, R15)"}}
		case succeeds:
			return []want{{kind: "value", value: result, ran: 1, next: rec{kind: done, fp: fp, result: result, expires: m.now + m.ret},
				why: "a free pair (never seen, released, or expired) runs its work once and returns its value (R2, R4, R5, R15; and R11, R12: no other pair may answer for it)"}}
		}
		return []want{{kind: "workErr", ran: 1, next: rec{}, why: "a failed work releases the key and its error is returned (R15)"}}
	})
}

func workDesc(succeeds bool, result string, outlives bool) string {
	s := "returns " + show(result)
	if !succeeds {
		s = "fails"
	}
	if outlives {
		s = "outlives its claim and " + s
	}
	return s
}

// stepClaim claims a drawn pair.
func (m *redisModel) stepClaim(t *rapid.T) {
	i, p := m.drawProc(t)
	pr := m.drawPair(t)
	fp := m.drawFingerprint(t, pr)
	f := m.drawFault(t)
	if f == failFirst && rapid.Bool().Draw(t, "the second command instead") {
		f = failSecond
	}
	ctx := m.arm(p, f)
	c, view, err := p.store.ClaimRecord(ctx, pr.tenant, pr.key, fp)
	disarm(p)
	if f == failSecond && !p.failed.Load() {
		f = noFault // it sent one command only
	}
	o := m.classify("", err, -1)
	m.nextID++
	id := m.nextID
	if err == nil {
		switch {
		case !view.known:
			o.kind, o.desc = "nil", fmt.Sprintf("nil error (claim #%d, if it holds one)", id)
		case view.done:
			o.kind, o.value, o.desc = "replay", view.result, fmt.Sprintf("nil error, Record{Done: true, Result: %s}", show(view.result))
		default:
			o.kind, o.desc = "held", fmt.Sprintf("holds the claim (claim #%d)", id)
		}
	}
	what := fmt.Sprintf("Claim(%s) with fingerprint %s", pr, show(fp))
	if f != noFault {
		what += " " + faultNames[f]
	}
	m.e.h.Record(p.name, what, o.desc)
	m.check(pr, what, o, func(st rec) []want {
		if !validPair(pr) {
			ws := []want{{kind: "invalid", next: st, why: "a tenant is 1 to 128 bytes and a key 1 to 256, with no NUL, and anything else is rejected before Redis is asked (R14)"}}
			if f == cancelled {
				ws = append(ws, want{kind: "ctx", next: st, why: ws[0].why})
			}
			return ws
		}
		switch {
		case f == failSecond && st.kind == free:
			return faulted(loseFirst, st, &rec{kind: pending, fp: fp, expires: m.now + m.ttl})
		case f == failSecond:
			return faulted(failFirst, st, nil)
		case f != noFault && st.kind == free:
			return faulted(f, st, &rec{kind: pending, fp: fp, expires: m.now + m.ttl})
		case f != noFault:
			return faulted(f, st, nil)
		case st.kind == free:
			return []want{{kind: "held", next: rec{kind: pending, fp: fp, holder: id, expires: m.now + m.ttl},
				why: "a free pair (never seen, released, or expired) is claimed (R2, R4; and R11, R12: no other pair may answer for it)"}}
		case st.fp != fp:
			return []want{{kind: "mismatch", next: st, why: "a record with another fingerprint is refused, and fingerprints are compared byte for byte (R13)"}}
		case st.kind == pending:
			return []want{{kind: "inProgress", next: st, why: "a pending claim holds its key until ClaimTTL, to the millisecond (R4)"}}
		}
		return []want{{kind: "replay", value: st.result, next: st, why: "a completed result is replayed byte for byte until Retention after its completion (R5, R7)"}}
	})
	if slices.ContainsFunc(m.recs[pr], func(r rec) bool { return r.holder == id }) {
		m.claims = append(m.claims, &heldClaim{id: id, proc: i, pair: pr, fp: fp, c: c})
	}
}

// pickClaim draws a pair and returns the latest claim the test holds on
// it, or skips the step if there is none. Drawing the pair, not an index
// among the claims, keeps each step's meaning when rapid removes an
// earlier step.
func (m *redisModel) pickClaim(t *rapid.T) *heldClaim {
	p := m.drawPair(t)
	for i := len(m.claims) - 1; i >= 0; i-- {
		if m.claims[i].pair == p {
			return m.claims[i]
		}
	}
	t.SkipNow()
	return nil
}

// stepComplete completes a held claim with a drawn result.
func (m *redisModel) stepComplete(t *rapid.T) {
	hc := m.pickClaim(t)
	p := m.procs[hc.proc]
	result := rapid.SampledFrom(modelResults).Draw(t, "result")
	f := m.drawFault(t)
	ctx := m.arm(p, f)
	err := p.store.Complete(ctx, hc.c, result)
	disarm(p)
	o := m.classify("", err, -1)
	if err == nil {
		o.kind = "ok"
	}
	o.desc = m.e.describeErr(err)
	what := fmt.Sprintf("Complete(claim #%d on %s, %s)", hc.id, hc.pair, show(result))
	if f != noFault {
		what += " " + faultNames[f]
	}
	m.e.h.Record(p.name, what, o.desc)
	m.check(hc.pair, what, o, func(st rec) []want {
		holds := st.kind == pending && st.holder == hc.id
		completed := rec{kind: done, fp: hc.fp, result: result, expires: m.now + m.ret}
		switch {
		case f != noFault && holds:
			return faulted(f, st, &completed)
		case f != noFault:
			return faulted(f, st, nil)
		case holds:
			return []want{{kind: "ok", next: completed, why: "the holder of a pending claim completes it (R8)"}}
		}
		return []want{{kind: "lost", next: st, why: "a claim that expired, or was completed or released already, is lost: Complete changes nothing (R8)"}}
	})
}

// stepRelease releases a held claim.
func (m *redisModel) stepRelease(t *rapid.T) {
	hc := m.pickClaim(t)
	p := m.procs[hc.proc]
	f := m.drawFault(t)
	ctx := m.arm(p, f)
	err := p.store.Release(ctx, hc.c)
	disarm(p)
	o := m.classify("", err, -1)
	if err == nil {
		o.kind = "ok"
	}
	o.desc = m.e.describeErr(err)
	what := fmt.Sprintf("Release(claim #%d on %s)", hc.id, hc.pair)
	if f != noFault {
		what += " " + faultNames[f]
	}
	m.e.h.Record(p.name, what, o.desc)
	m.check(hc.pair, what, o, func(st rec) []want {
		holds := st.kind == pending && st.holder == hc.id
		switch {
		case f != noFault && holds:
			return faulted(f, st, &rec{})
		case f != noFault:
			return faulted(f, st, nil)
		case holds:
			return []want{{kind: "ok", next: rec{}, why: "the holder of a pending claim releases it (R9)"}}
		}
		return []want{{kind: "lost", next: st, why: "a claim that expired, or was completed or released already, is lost: Release deletes nothing (R9)"}}
	})
}

// advanceBy moves the clock and the model's time.
func (m *redisModel) advanceBy(d time.Duration) {
	m.now += d
	m.e.advance(d)
}

// stepAdvance moves the clock to just before or just after a deadline of
// a record, or by a fixed amount.
func (m *redisModel) stepAdvance(t *rapid.T) {
	if !m.e.virtual {
		t.SkipNow()
	}
	var targets []time.Duration
	for _, p := range m.used {
		for _, r := range m.states(p) {
			if r.kind == free {
				continue
			}
			for _, at := range []time.Duration{r.expires - time.Millisecond, r.expires + time.Millisecond} {
				if at > m.now && !slices.Contains(targets, at) {
					targets = append(targets, at)
				}
			}
		}
	}
	slices.Sort(targets)
	for _, d := range []time.Duration{time.Second, 72 * time.Hour} {
		targets = append(targets, m.now+d)
	}
	m.advanceBy(rapid.SampledFrom(targets).Draw(t, "advance to") - m.now)
}

// stepRestart replaces a process by a new one (a new client and a new
// store on the same server): the claims it held are gone with it.
func (m *redisModel) stepRestart(t *rapid.T) {
	i, p := m.drawProc(t)
	p.close()
	m.restarts++
	m.procs[i] = m.e.procWith(fmt.Sprintf("worker %c (restart %d)", 'A'+i, m.restarts), m.o)
	m.claims = slices.DeleteFunc(m.claims, func(c *heldClaim) bool { return c.proc == i })
	m.e.h.Record(p.name, "process restarts", "its claims are lost with it; its records stay in Redis")
}

// stepFlushScripts empties Redis's script cache, as a restarted or
// failed-over server has.
func (m *redisModel) stepFlushScripts(t *rapid.T) {
	if !m.e.virtual {
		t.SkipNow() // a real server's scripts are not only the suite's
	}
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	if err := m.e.inspect.Do(ctx, "SCRIPT", "FLUSH").Err(); err != nil {
		m.seq.Fatalf("the suite's SCRIPT FLUSH = %v", err)
	}
	m.e.h.Note("SCRIPT FLUSH: Redis forgets every loaded script (the next EVALSHA gets NOSCRIPT)")
}

func checkModelSequences(t *testing.T, h *suites.History, fresh suites.Fresh[*env]) {
	cfg := modelcheck.Config{Sequences: 60, Steps: 25, ShrinkRuns: 1000}
	modelcheck.Sequences(t, h, fresh, cfg, func(seq *modelcheck.Seq, e *env) {
		m := &redisModel{e: e, seq: seq, recs: map[pair][]rec{}}
		m.o = e.modelOptions()
		if e.virtual {
			m.o = rapid.SampledFrom(modelOptions).Draw(seq.T, "options")
			m.o.Prefix = e.prefix
		}
		m.ttl, m.ret = cmp.Or(m.o.ClaimTTL, defaultClaimTTL), cmp.Or(m.o.Retention, defaultRetention)
		m.pairs = append([]pair{{"acme", "order-1"}}, rapid.SampledFrom(modelPairs).Draw(seq.T, "group")...)
		e.h.Note("stores with ClaimTTL %v and Retention %v (%v and %v); the sequence works on %d pairs", m.o.ClaimTTL, m.o.Retention, m.ttl, m.ret, len(m.pairs))
		m.procs = []*proc{e.procWith("worker A", m.o), e.procWith("worker B", m.o)}
		seq.Repeat(map[string]func(*rapid.T){
			"do":       m.stepDo,
			"claim":    m.stepClaim,
			"complete": m.stepComplete,
			"release":  m.stepRelease,
			"advance":  m.stepAdvance,
			"restart":  m.stepRestart,
			"flush":    m.stepFlushScripts,
		})
	})
}

// The concurrent model. Processes call Do at once, for real, on two keys
// of one tenant; every Do is one or two operations of the history: a Do
// whose work ran is a claim (from its call to the start of its work) and a
// settlement (from the work's return to Do's return); any other Do is a
// lookup. Per key, a claim takes a free key, a settlement completes or
// frees it, a lookup sees "in progress" only while the key is pending and
// a value only once it is done with that value.

type linKind int

const (
	linClaim linKind = iota
	linSettle
	linLookup
)

type linInput struct {
	key   string
	kind  linKind
	ok    bool
	value string
}

type linOutput struct {
	inProgress, done bool
	value            string
}

type linState struct {
	pending, done bool
	value         string
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(linState), input.(linInput)
		switch in.kind {
		case linClaim:
			return !s.pending && !s.done, linState{pending: true}
		case linSettle:
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

func linPartition(ops []modelcheck.Op) [][]modelcheck.Op {
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
	linRounds = 12
	linProcs  = 3
	linCalls  = 3
)

var linKeys = []string{"k1", "k2"}

func checkModelLinearizable(t *testing.T, h *suites.History, fresh suites.Fresh[*env]) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	seed := uint64(suites.Seed(t))
	var histories [][]modelcheck.Op
	for round := range linRounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		type plan struct {
			key, value string
			fails      bool
			yields     int
		}
		plans := make([][]plan, linProcs)
		for c := range plans {
			for range linCalls {
				plans[c] = append(plans[c], plan{key: linKeys[rng.IntN(len(linKeys))], value: fmt.Sprintf("v%d-%d", c, rng.IntN(100)), fails: rng.IntN(3) == 0, yields: rng.IntN(4)})
			}
		}
		var rec modelcheck.Recorder
		var odd oddAnswers
		fresh(t, suites.NewHistory(), func(t *testing.T, e *env) {
			o := e.modelOptions()
			procs := make([]*proc, linProcs)
			for c := range procs {
				procs[c] = e.procWith(fmt.Sprintf("worker %c", 'A'+c), o)
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c, ps := range plans {
				wg.Go(func() {
					<-start
					for _, p := range ps {
						linDo(t, e, procs[c], &rec, &odd, c, p.key, p.value, p.fails, p.yields)
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
	modelcheck.Linearizable(t, h, linModel, linPartition, histories, 5*time.Second) // milliseconds unloaded; the margin is for a starved machine
}

// oddAnswers collects answers that no state of a key allows (neither the
// work's outcome, nor "in progress", nor a stored value), whatever the
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

// linDo makes one call of Do and records it as one or two operations.
func linDo(t *testing.T, e *env, p *proc, rec *modelcheck.Recorder, odd *oddAnswers, client int, key, value string, fails bool, yields int) {
	var started, returned, ran atomic.Int64
	work := func(context.Context) (string, error) {
		started.Store(rec.Now())
		ran.Add(1)
		for range yields {
			runtime.Gosched()
		}
		returned.Store(rec.Now())
		if fails {
			return "", errModelWork
		}
		return value, nil
	}
	call := rec.Now()
	var v string
	var err error
	suites.Guard(t, func() { v, err = p.store.Do(context.Background(), "acme", key, "fp:doc-42", work) })
	ret := rec.Now()
	action := fmt.Sprintf(`Do("acme", %q)`, key)
	errs := e.tg.errs
	switch n := ran.Load(); {
	case n > 1:
		odd.add(fmt.Sprintf("%s ran its work %d times, want at most once (R2)", action, n))
		return
	case n == 1:
		if fails && !errors.Is(err, errModelWork) || !fails && (err != nil || v != value) {
			odd.add(fmt.Sprintf("%s whose work returned %q (or failed: %v) = %q, %v, want the work's value, or its error (R15)", action, value, fails, v, shortErr(err)))
			return
		}
		rec.Add(modelcheck.Op{Client: client, Call: call, Return: started.Load(), Input: linInput{key: key, kind: linClaim},
			Action: "calls " + action, Outcome: action + ": its work starts"})
		what := fmt.Sprintf("%s: its work returns %q", action, value)
		if fails {
			what = fmt.Sprintf("%s: its work fails", action)
		}
		rec.Add(modelcheck.Op{Client: client, Call: returned.Load(), Return: ret, Input: linInput{key: key, kind: linSettle, ok: !fails, value: value},
			Action: what, Outcome: action + " " + e.describe(v, err)})
		return
	}
	out := linOutput{}
	switch {
	case errors.Is(err, errs.InProgress):
		out.inProgress = true
	case err == nil:
		out.done, out.value = true, v
	default:
		odd.add(fmt.Sprintf("%s = %q, %v without running the work: no state of a key allows that answer, want the work run and its outcome, an error wrapping %v, or the stored value (R2, R5, R15)", action, v, shortErr(err), errs.InProgress))
		return
	}
	rec.Add(modelcheck.Op{Client: client, Call: call, Return: ret, Input: linInput{key: key, kind: linLookup}, Output: out,
		Action: "calls " + action, Outcome: fmt.Sprintf("%s %s (the work did not run)", action, e.describe(v, err))})
}
