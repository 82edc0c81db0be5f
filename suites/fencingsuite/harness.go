package fencingsuite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/syncpoint"
	"github.com/fourth-outcome/labkit/task"
)

// target is what every case is handed: the lab's two constructors. A case
// builds what it needs with locks and store.
type target struct {
	newLocks func(task.LockOptions) (task.LockService, error)
	newStore func(task.KV) task.FencedStore
}

// locks builds a lock service with the given TTL (zero: the default) whose
// calls are recorded in h, and ends the case if the constructor fails.
func (tg target) locks(t *testing.T, h *suites.History, ttl time.Duration) lockService {
	t.Helper()
	l, err := tg.build(ttl)
	if err != nil {
		t.Fatalf("NewLocks(LockOptions{TTL: %v}) = %v, want a lock service", ttl, err)
	}
	suites.CloseAtEnd(t, l)
	return lockService{LockService: l, h: h}
}

// build calls the lab's NewLocks through suites.Construct, so that
// goroutines the lock service starts (an actor that owns the grants) are
// its own, and may stay blocked when the case ends.
func (tg target) build(ttl time.Duration) (task.LockService, error) {
	type built struct {
		l   task.LockService
		err error
	}
	b := suites.Construct(func() built {
		l, err := tg.newLocks(task.LockOptions{TTL: ttl})
		return built{l, err}
	})
	return b.l, b.err
}

// store builds a store over a new, empty memKV; its calls are recorded in
// h.
func (tg target) store(t *testing.T, h *suites.History) fencedStore {
	t.Helper()
	kv := &memKV{h: h, values: map[string]task.FencedValue{}}
	// Through Construct, goroutines the store starts (an actor that owns
	// its KV calls) are its own, and may stay blocked when the case ends.
	s := suites.Construct(func() task.FencedStore { return tg.newStore(kv) })
	suites.CloseAtEnd(t, s)
	return fencedStore{FencedStore: s, kv: kv, h: h}
}

// lockService is the student's lock service as the cases call it: every
// call is recorded in the case's history, unless h is nil.
type lockService struct {
	task.LockService
	h *suites.History
}

// acquire is Acquire(resource) by actor, recorded.
func (l lockService) acquire(actor, resource string) (task.Grant, error) {
	g, err := l.Acquire(context.Background(), resource, actor)
	if l.h != nil {
		l.h.Record(actor, fmt.Sprintf("Acquire(%q)", resource), describeGrant(g, err))
	}
	return g, err
}

// release is Release(g) by actor, recorded.
func (l lockService) release(actor string, g task.Grant) error {
	err := l.Release(context.Background(), g)
	if l.h != nil {
		l.h.Record(actor, fmt.Sprintf("Release(token %d of %q)", g.Token, g.Resource), describeErr(err, "released"))
	}
	return err
}

// fencedStore is the student's store as the cases call it: every call is
// recorded in the case's history, unless h is nil.
type fencedStore struct {
	task.FencedStore
	kv *memKV
	h  *suites.History
}

// write is Write(token, key, value) by actor, recorded.
func (s fencedStore) write(actor string, token task.FencingToken, key, value string) error {
	err := s.Write(context.Background(), token, key, value)
	if s.h != nil {
		s.h.Record(actor, writeCall(token, key, value), describeErr(err, "accepted"))
	}
	return err
}

// read is Read(key), recorded as the test's own look at the store.
func (s fencedStore) read(key string) (task.FencedValue, bool, error) {
	v, ok, err := s.Read(context.Background(), key)
	if s.h != nil {
		s.h.Record("store", fmt.Sprintf("Read(%q)", key), describeRead(v, ok, err))
	}
	return v, ok, err
}

func writeCall(token task.FencingToken, key, value string) string {
	return fmt.Sprintf("Write(%d, %q, %q)", token, key, value)
}

// at renders an instant of the bubble's clock as the timeline's "t=...".
func at(tm time.Time) string {
	return "t=" + tm.Sub(fakeclock.Epoch).String()
}

func describeGrant(g task.Grant, err error) string {
	if err != nil {
		return describeErr(err, "")
	}
	return fmt.Sprintf("granted token %d until %s", g.Token, at(g.Expires))
}

func describeRead(v task.FencedValue, ok bool, err error) string {
	switch {
	case err != nil:
		return "error " + err.Error()
	case !ok:
		return "nothing written"
	default:
		return "holds " + v.String()
	}
}

// describeErr renders a call's error for the timeline, naming the lab's
// sentinels.
func describeErr(err error, success string) string {
	switch {
	case err == nil:
		return success
	case errors.Is(err, task.ErrStaleToken):
		return "REFUSED (stale token): " + err.Error()
	case errors.Is(err, task.ErrLockHeld):
		return "refused (lock held): " + err.Error()
	case errors.Is(err, task.ErrLockLost):
		return "refused (lock lost): " + err.Error()
	default:
		return "error " + err.Error()
	}
}

// wrapping formats the expectation of a call that should have failed with
// sentinel: "an error wrapping lock held".
func wrapping(sentinel error) string {
	return fmt.Sprintf("an error wrapping %q", sentinel)
}

// grantString renders an Acquire result for a failure message.
func grantString(g task.Grant, err error) string {
	if err != nil {
		return fmt.Sprintf("Grant{}, %v", err)
	}
	return fmt.Sprintf("Grant{%q, %q, token %d, expires %s}, nil", g.Resource, g.Holder, g.Token, at(g.Expires))
}

// ---------------------------------------------------------------------------
// The KV under the store.

// memKV is the suite's KV: a map behind a mutex. Before each call it runs
// its hook, if any, which can fail the call, cancel the caller's context
// or hold the call at a gate; then it honours ctx, as a real storage
// client does. With trace set, it records every call in h.
type memKV struct {
	h     *suites.History
	trace bool

	mu     sync.Mutex
	values map[string]task.FencedValue
	hook   func(ctx context.Context, op, key string, v task.FencedValue) error
	puts   int
}

func (kv *memKV) Get(ctx context.Context, key string) (task.FencedValue, bool, error) {
	if err := kv.before(ctx, "Get", key, task.FencedValue{}); err != nil {
		kv.record(fmt.Sprintf("Get(%q)", key), "error "+err.Error())
		return task.FencedValue{}, false, err
	}
	kv.mu.Lock()
	v, ok := kv.values[key]
	kv.mu.Unlock()
	kv.record(fmt.Sprintf("Get(%q)", key), describeRead(v, ok, nil))
	return v, ok, nil
}

func (kv *memKV) Put(ctx context.Context, key string, v task.FencedValue) error {
	if err := kv.before(ctx, "Put", key, v); err != nil {
		kv.record(fmt.Sprintf("Put(%q, %v)", key, v), "error "+err.Error())
		return err
	}
	kv.mu.Lock()
	kv.values[key] = v
	kv.puts++
	kv.mu.Unlock()
	kv.record(fmt.Sprintf("Put(%q, %v)", key, v), "stored")
	return nil
}

func (kv *memKV) before(ctx context.Context, op, key string, v task.FencedValue) error {
	kv.mu.Lock()
	hook := kv.hook
	kv.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, op, key, v); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("kv %s %q: %w", op, key, err)
	}
	return nil
}

func (kv *memKV) record(action, outcome string) {
	if kv.trace && kv.h != nil {
		kv.h.Record("kv", action, outcome)
	}
}

// setHook installs hook for the KV's calls from now on (nil: none).
func (kv *memKV) setHook(hook func(ctx context.Context, op, key string, v task.FencedValue) error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.hook = hook
}

// putCount returns how many Puts have stored a value.
func (kv *memKV) putCount() int {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return kv.puts
}

// holdPut makes the first Put of token on key wait until release is
// called; arrived is closed when that Put reaches the gate.
func (kv *memKV) holdPut(key string, token task.FencingToken) (arrived <-chan struct{}, release func()) {
	arrivedCh, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	kv.setHook(func(_ context.Context, op, k string, v task.FencedValue) error {
		if op == "Put" && k == key && v.Token == token {
			held := false
			once.Do(func() { held = true; close(arrivedCh) })
			if held {
				<-gate
			}
		}
		return nil
	})
	var released sync.Once
	return arrivedCh, func() { released.Do(func() { close(gate) }) }
}

// errKV is the root of every failure the suite's KV injects.
var errKV = errors.New("kv: connection reset by peer")

// ---------------------------------------------------------------------------
// Concurrent grants.

const (
	raceWorkers     = 8  // goroutines racing in one round
	grantAttempts   = 3  // Acquire attempts of each goroutine per round
	scheduledRounds = 10 // seeded schedules tried on an instrumented lock service
	freeRounds      = 50 // real races, for the race detector
	writeRounds     = 20 // real races of writes, for the race detector
)

// startLine returns wait, which blocks its callers (spinning, so that they
// all run at once when released) until start is called.
func startLine() (wait func(), start func()) {
	var released atomic.Bool
	return func() {
			for !released.Load() {
				runtime.Gosched()
			}
		}, func() {
			released.Store(true)
		}
}

// grantRace is one round of concurrent Acquires of one resource: each of
// raceWorkers workers tries grantAttempts times to Acquire it and, when
// granted, takes the suite's own occupancy flag, notes its token, gives the
// flag back and Releases. problem says what went wrong, "" when nothing
// did: two holders at once, or a grant whose token is not larger than the
// grant before it.
type grantRace struct {
	l        task.LockService
	resource string

	holding  atomic.Int64 // the token of the grant that holds the resource, 0 for none
	mu       sync.Mutex
	tokens   []task.FencingToken // in grant order
	problems []string
}

func (r *grantRace) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// worker is what one racing worker does.
func (r *grantRace) worker(actor string) {
	for range grantAttempts {
		g, err := r.l.Acquire(context.Background(), r.resource, actor)
		if err != nil {
			if !errors.Is(err, task.ErrLockHeld) {
				r.note("%s: Acquire(%q) = %v, want a grant or %s", actor, r.resource, err, wrapping(task.ErrLockHeld))
			}
			continue
		}
		if g.Token == 0 || !r.holding.CompareAndSwap(0, int64(g.Token)) {
			r.note("%s: Acquire(%q) granted token %d while the grant with token %d still held it: two holders at once", actor, r.resource, g.Token, r.holding.Load())
			return
		}
		r.mu.Lock()
		if n := len(r.tokens); n > 0 && g.Token <= r.tokens[n-1] {
			r.problems = append(r.problems, fmt.Sprintf("%s: Acquire(%q) granted token %d after a grant with token %d: tokens must increase with every grant", actor, r.resource, g.Token, r.tokens[n-1]))
		}
		r.tokens = append(r.tokens, g.Token)
		r.mu.Unlock()
		r.holding.Store(0)
		if err := r.l.Release(context.Background(), g); err != nil {
			r.note("%s: Release(token %d) of its own current grant = %v, want nil: another Acquire replaced it", actor, g.Token, err)
		}
	}
}

func (r *grantRace) problem() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) > 0 {
		return fmt.Sprintf("%d workers racing for %q (%d attempts each, every winner releasing at once): %s", raceWorkers, r.resource, grantAttempts, r.problems[0])
	}
	if len(r.tokens) == 0 {
		return fmt.Sprintf("%d workers racing for %q, a free resource: no Acquire was granted", raceWorkers, r.resource)
	}
	return ""
}

// freeGrantRound releases the workers at once on the real scheduler.
func freeGrantRound(l task.LockService, resource string) string {
	r := &grantRace{l: l, resource: resource}
	wait, start := startLine()
	var wg sync.WaitGroup
	for i := range raceWorkers {
		wg.Go(func() {
			wait()
			r.worker(fmt.Sprintf("worker %d", i))
		})
	}
	start()
	wg.Wait()
	return r.problem()
}

// scheduledGrantRound runs the workers under a schedule drawn from seed
// (suites/syncpoint): when the lock service's mutexes are the grader's
// instrumented ones, one worker runs at a time and the suite picks who runs
// at every Lock and Unlock.
func scheduledGrantRound(seed int64, l task.LockService, resource string) (string, syncpoint.Result) {
	r := &grantRace{l: l, resource: resource}
	names := make([]string, raceWorkers)
	fs := make([]func(), raceWorkers)
	for i := range raceWorkers {
		names[i] = fmt.Sprintf("worker %d", i)
		fs[i] = func() { r.worker(names[i]) }
	}
	res := syncpoint.Race(seed, names, fs...)
	return r.problem(), res
}

// freeWriteRound releases one goroutine per token at once, each writing to
// key with its token, and then reads key: it must hold the highest token's
// value. It returns what went wrong, or "".
func freeWriteRound(s task.FencedStore, key string, tokens []task.FencingToken) string {
	highest := slices.Max(tokens)
	var mu sync.Mutex
	var problems []string
	wait, start := startLine()
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Go(func() {
			wait()
			value := fmt.Sprintf("written with %d", tok)
			err := s.Write(context.Background(), tok, key, value)
			if err != nil && (tok == highest || !errors.Is(err, task.ErrStaleToken)) {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s = %v, want nil or %s", writeCall(tok, key, value), err, wrapping(task.ErrStaleToken)))
				mu.Unlock()
			}
		})
	}
	start()
	wg.Wait()
	if len(problems) > 0 {
		return problems[0]
	}
	want := task.FencedValue{Value: fmt.Sprintf("written with %d", highest), Token: highest}
	if v, ok, err := s.Read(context.Background(), key); err != nil || !ok || v != want {
		return fmt.Sprintf("tokens %v written to %q at the same instant, then Read(%q) = %v, %v, %v, want %v, true, nil", tokens, key, key, v, ok, err, want)
	}
	return ""
}

// scheduledWriteRound writes one token per participant to key under a
// schedule drawn from seed (suites/syncpoint), then reads key: it must hold
// the highest token's value. When the store's mutexes are the grader's
// instrumented ones, one writer runs at a time and the suite picks who
// runs at every Lock and Unlock, so a check and a write taken under two
// separate lock sections are interleaved with another writer's.
func scheduledWriteRound(seed int64, s task.FencedStore, key string, tokens []task.FencingToken) (string, syncpoint.Result) {
	names := make([]string, len(tokens))
	fs := make([]func(), len(tokens))
	for i, tok := range tokens {
		names[i] = fmt.Sprintf("writer of %d", tok)
		fs[i] = func() { _ = s.Write(context.Background(), tok, key, fmt.Sprintf("written with %d", tok)) }
	}
	res := syncpoint.Race(seed, names, fs...)
	highest := slices.Max(tokens)
	want := task.FencedValue{Value: fmt.Sprintf("written with %d", highest), Token: highest}
	if v, ok, err := s.Read(context.Background(), key); err != nil || !ok || v != want {
		return fmt.Sprintf("tokens %v written to %q under a schedule of the store's lock operations, then Read(%q) = %v, %v, %v, want %v, true, nil: a lower token landed on top of a higher one", tokens, key, key, v, ok, err, want), res
	}
	return "", res
}

// raceDetector reports whether the test binary was built with the race
// detector, from the build settings it records.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
