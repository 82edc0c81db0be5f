package claimsuite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
)

func checkFirstCall(t *testing.T, h *suites.History, s target) {
	var c counter
	got, err := s.do(h, "worker A", "k1", c.work(h, "worker A", "k1", nil, "signed:doc-42", nil))
	if err != nil || got != "signed:doc-42" {
		t.Errorf(`Do("k1") = %q, %v, want "signed:doc-42", nil`, got, err)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf(`work ran %d times for one Do("k1"), want 1`, n)
	}

	var failing counter
	got, err = s.do(h, "worker A", "k2", failing.work(h, "worker A", "k2", nil, "", errDeclined))
	if err != errDeclined {
		t.Errorf(`Do("k2") with work failing with %q = %q, %v, want "", the work's own error value (not a copy or a wrapper)`, errDeclined, got, err)
	}

	// A failing work may still return a value (the provider's own words):
	// it comes back too, unchanged.
	const partial = "provider said: insufficient funds"
	got, err = s.do(h, "worker A", "k3", failing.work(h, "worker A", "k3", nil, partial, errDeclined))
	if got != partial || err != errDeclined {
		t.Errorf(`Do("k3") with work returning %q, %q = %q, %v, want both unchanged`, partial, errDeclined, got, err)
	}

	// The empty string is a value like any other.
	var empty counter
	got, err = s.do(h, "worker A", "k4", empty.work(h, "worker A", "k4", nil, "", nil))
	if got != "" || err != nil {
		t.Errorf(`Do("k4") with work returning "", nil = %q, %v, want "", nil`, got, err)
	}
}

func checkConcurrentDuplicates(t *testing.T, h *suites.History, s target) {
	const workers = 20
	var c counter
	gate := make(chan struct{})
	first, firstResult := s.startSlow(h, &c, "worker 00", "k1", gate, "signed:doc-42")
	calls := []*suites.Call{first}
	for i := 1; i < workers; i++ {
		actor := fmt.Sprintf("worker %02d", i)
		calls = append(calls, suites.Go(func() {
			s.do(h, actor, "k1", c.work(h, actor, "k1", gate, "signed:doc-42", nil))
		}))
		calls[i].Settle()
	}
	h.Note("the first worker's work finishes")
	close(gate)
	for _, call := range calls {
		call.Wait()
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("%d workers called Do(\"k1\") while the first one was working: work ran %d times, want 1", workers, n)
	}
	if r := firstResult; r.err != nil || r.value != "signed:doc-42" {
		t.Errorf(`first Do("k1") = %q, %v, want "signed:doc-42", nil`, r.value, r.err)
	}
}

// The simultaneous-claims case races goroutines for real, so whether a
// broken claim is caught depends on how often the scheduler actually runs
// two claims at the same instant, which varies with load, cores and -race.
// The case therefore calibrates itself: between rounds on the student's
// store it runs the same race on a deliberately broken store (lookup and
// insert in two lock sections) and keeps going until that store has been
// caught calibrationHits times, so every verdict rests on proof that the
// machine did interleave claims. maxRounds bounds the cost on a machine
// that never interleaves (one core); there the case passes and says it
// could not exercise the race.
const (
	raceWorkers     = 8
	calibrationHits = 20
	maxRaceRounds   = 20000
	scheduledRounds = 50  // seeded schedules tried on an instrumented store
	freeRounds      = 200 // real races after them, for the race detector
)

// firstWinner is the first line of a caller that ran the work ("ok").
func firstWinner(lines []string) string {
	for _, l := range lines {
		if strings.Contains(l, `"ok", nil`) {
			return l
		}
	}
	return lines[0]
}

func checkSimultaneousClaims(t *testing.T, h *suites.History, s target) {
	// Claims can only overlap with at least two Ps running goroutines.
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	// Scheduled rounds first. Graded by labctl, the store's "sync" and
	// "sync/atomic" imports point at suites/syncpoint, and the suite
	// chooses from the case's seed which caller runs at every Lock, Unlock,
	// Map and atomic operation: a claim split over two steps is exposed on
	// every run, on one CPU or many, and replays from the seed.
	seed := suites.Seed(t)
	scheduled := 0
	for round := range scheduledRounds {
		key := fmt.Sprintf("s%d", round)
		n, lines, res := s.controlledRound(seed+int64(round), key)
		if !res.Controlled {
			break // no instrumented locks, or code the schedule cannot drive
		}
		scheduled++
		if n != 1 {
			h.Note("round %d (seed %d): %d workers on key %q, their lock, Map and atomic operations interleaved by the suite:", round+1, seed+int64(round), raceWorkers, key)
			const shown = 24
			for i, l := range res.Trace {
				if i == shown {
					h.Note("  ... (%d more switches)", len(res.Trace)-shown)
					break
				}
				h.Note("  %s", l)
			}
			for _, l := range lines {
				h.Note("%s", l)
			}
			h.Note("work ran %d times", n)
			t.Fatalf("round %d: %d workers raced for key %q under a schedule of their lock, Map and atomic operations, and the work ran %d times, want 1 (%s)", round+1, raceWorkers, key, n, firstWinner(lines))
		}
	}
	if scheduled == scheduledRounds {
		// The claim is atomic under every schedule tried. A few rounds
		// on the real scheduler still give the race detector parallel
		// accesses to look at.
		for round := range freeRounds {
			key := fmt.Sprintf("f%d", round)
			if n, lines := s.raceRound(key); n != 1 {
				t.Fatalf("round %d: %d workers raced for key %q and the work ran %d times, want 1 (%s)", round+1, raceWorkers, key, n, lines[0])
			}
		}
		return
	}

	// Otherwise (the store synchronises with channels or atomics, or runs
	// under plain go test) the race is run for real, calibrated below.
	broken := target{Store: &checkThenInsert{errInProgress: s.errInProgress}, errInProgress: s.errInProgress}
	hits := 0
	round := 0
	giveUp := suites.RealNow().Add(suites.RaceBudget)
	for ; round < maxRaceRounds && hits < calibrationHits && suites.RealNow().Before(giveUp); round++ {
		if round == maxRaceRounds/10 && hits == 0 {
			break // this machine does not interleave at all; stop early
		}
		key := fmt.Sprintf("k%d", round)
		n, lines := s.raceRound(key)
		if n != 1 {
			h.Note("round %d: %d workers released together on key %q", round+1, raceWorkers, key)
			for _, l := range lines {
				h.Note("%s", l)
			}
			h.Note("work ran %d times", n)
			t.Fatalf("round %d: %d workers raced for key %q and the work ran %d times, want 1 (%s)", round+1, raceWorkers, key, n, lines[0])
		}
		if n, _ := broken.raceRound(key); n > 1 {
			hits++
		}
	}
	if hits < calibrationHits {
		suites.Inconclusive(t, "in %d rounds (at most %v of real time) this machine interleaved claims only %d times (the race detector and more cores help); the claim was not caught double-executing", round, suites.RaceBudget, hits)
	}
}

func checkPendingDuplicate(t *testing.T, h *suites.History, s target) {
	var c counter
	gate := make(chan struct{})
	first, _ := s.startSlow(h, &c, "worker A", "k1", gate, "signed:doc-42")
	var r result
	dup := suites.Go(func() {
		r.value, r.err = s.do(h, "worker B", "k1", c.work(h, "worker B", "k1", nil, "signed:doc-42", nil))
	})
	if !dup.Settle() {
		h.Note("worker B's Do(\"k1\") is still waiting for worker A's work")
		t.Errorf(`Do("k1") while the first call is working blocked until that work finished, want an immediate error wrapping %v`, s.errInProgress)
	}
	close(gate)
	dup.Wait()
	first.Wait()
	if !errors.Is(r.err, s.errInProgress) {
		t.Errorf(`Do("k1") while the first call is working = %q, %v, want an error wrapping %v`, r.value, r.err, s.errInProgress)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("work ran %d times for a key whose first call was still working, want 1", n)
	}
}

// checkLongPendingDuplicate holds the first call's work for two days of
// virtual time: a claim has no expiry in this lab, so every duplicate on the
// way is told "in progress", however old the claim.
func checkLongPendingDuplicate(t *testing.T, h *suites.History, s target) {
	var c counter
	gate := make(chan struct{})
	first, firstResult := s.startSlow(h, &c, "worker A", "k1", gate, "signed:doc-42")
	var elapsed time.Duration
	for _, at := range []time.Duration{time.Minute, time.Hour, 48 * time.Hour} {
		fakeclock.Advance(at - elapsed)
		elapsed = at
		var r result
		dup := suites.Go(func() {
			r.value, r.err = s.do(h, "worker B", "k1", c.work(h, "worker B", "k1", nil, "signed:doc-42 (again)", nil))
		})
		if !dup.Settle() {
			close(gate)
			dup.Wait()
			first.Wait()
			t.Fatalf(`Do("k1") %v after the first call started blocked until that work finished, want an immediate error wrapping %v`, at, s.errInProgress)
		}
		if !errors.Is(r.err, s.errInProgress) {
			t.Errorf(`Do("k1") %v after the first call started, while it still works = %q, %v, want an error wrapping %v (a claim does not expire in this lab)`, at, r.value, r.err, s.errInProgress)
		}
	}
	h.Note("the first worker's work finishes, two days later")
	close(gate)
	first.Wait()
	if n := c.n.Load(); n != 1 {
		t.Errorf("work ran %d times for a key whose first call was still working, want 1", n)
	}
	if r := firstResult; r.err != nil || r.value != "signed:doc-42" {
		t.Errorf(`first Do("k1") = %q, %v, want "signed:doc-42", nil`, r.value, r.err)
	}
}

func checkCompletedDuplicate(t *testing.T, h *suites.History, s target) {
	var c counter
	v, err := s.do(h, "worker A", "k1", c.work(h, "worker A", "k1", nil, "signed:doc-42", nil))
	if err != nil {
		t.Fatalf(`first Do("k1") = %q, %v, want "signed:doc-42", nil`, v, err)
	}
	var empty counter
	if v, err := s.do(h, "worker A", "k-empty", empty.work(h, "worker A", "k-empty", nil, "", nil)); err != nil || v != "" {
		t.Fatalf(`first Do("k-empty") = %q, %v, want "", nil`, v, err)
	}
	var elapsed time.Duration
	for _, later := range []time.Duration{time.Second, time.Hour, 25 * time.Hour, 8 * 24 * time.Hour, 400 * 24 * time.Hour} {
		fakeclock.Advance(later - elapsed)
		elapsed = later
		v, err := s.do(h, "worker B", "k1", c.work(h, "worker B", "k1", nil, "signed:doc-42 (again)", nil))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`Do("k1") %v after completion = %q, %v, want the stored "signed:doc-42", nil`, later, v, err)
		}
		v, err = s.do(h, "worker B", "k-empty", empty.work(h, "worker B", "k-empty", nil, "not empty (again)", nil))
		if err != nil || v != "" {
			t.Errorf(`Do("k-empty") %v after its work succeeded with "" = %q, %v, want the stored "", nil (an empty result is a result)`, later, v, err)
		}
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("work ran %d times for a key that had already completed, want 1", n)
	}
	if n := empty.n.Load(); n != 1 {
		t.Errorf(`work ran %d times for a key whose work had succeeded with "", want 1`, n)
	}
}

// checkCancelledCallerKeepsSuccess cancels the first caller's context while
// its work runs; the work ignores it and succeeds. What the work returned is
// the outcome: the caller gets it unchanged and the success is stored.
func checkCancelledCallerKeepsSuccess(t *testing.T, h *suites.History, s target) {
	for _, how := range []string{"cancelled", "past its deadline"} {
		key := "k-" + strings.ReplaceAll(how, " ", "-")
		var c counter
		ctx, cancel := context.WithCancel(context.Background())
		if how != "cancelled" {
			ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		}
		work := func(context.Context) (string, error) {
			c.n.Add(1)
			if how == "cancelled" {
				cancel()
			} else {
				time.Sleep(2 * time.Second)
			}
			h.Recordf("worker A", "work returns", "the caller's context is %s; the work succeeded anyway", how)
			return "signed:doc-42", nil
		}
		v, err := s.Do(ctx, key, work)
		cancel()
		h.Record("worker A", fmt.Sprintf("Do(%q)", key), s.describe(v, err))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`Do(%q) whose work succeeded while the caller's context was %s = %q, %v, want "signed:doc-42", nil (the work's result, unchanged)`, key, how, v, err)
		}
		fakeclock.Advance(time.Minute)
		v, err = s.do(h, "worker B", key, c.work(h, "worker B", key, nil, "signed:doc-42 (again)", nil))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`Do(%q) after that success = %q, %v, want the stored "signed:doc-42", nil`, key, v, err)
		}
		if n := c.n.Load(); n != 1 {
			t.Errorf("work ran %d times for %q, whose first work succeeded while its caller's context was %s, want 1: the signing request went out twice", n, key, how)
		}
	}
}

func checkFailureReleases(t *testing.T, h *suites.History, s target) {
	failures := []error{
		errDeclined,
		fmt.Errorf("dial provider: %w", context.DeadlineExceeded),
		context.Canceled,
	}
	for i, failure := range failures {
		key := fmt.Sprintf("k%d", i+1)
		var c counter
		v, err := s.do(h, "worker A", key, c.work(h, "worker A", key, nil, "", failure))
		if err != failure {
			t.Errorf(`Do(%q) with work failing with %q = %q, %v, want the work's own error`, key, failure, v, err)
		}
		fakeclock.Advance(time.Minute)
		v, err = s.do(h, "worker A (retry)", key, c.work(h, "worker A (retry)", key, nil, "signed:doc-42", nil))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`retry Do(%q) after the work failed with %q = %q, %v, want "signed:doc-42", nil (the key must be released, whatever the error)`, key, failure, v, err)
		}
		if n := c.n.Load(); n != 2 {
			t.Errorf("work ran %d times for %q (one failure with %q, one retry), want 2", n, key, failure)
		}
	}

	// The release is as concurrent as the claim: callers fail and retry on
	// their own keys at once, for real (no schedule), so that the race
	// detector sees a release made outside the store's lock.
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	var c counter
	var start atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wrong []string
	// In each round every worker's failing work waits (for a while) until
	// all of them are failing, so that the releases happen together.
	var failing [releaseRounds]atomic.Int32
	fail := func(i int) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			c.n.Add(1)
			failing[i].Add(1)
			for spin := 0; failing[i].Load() < raceWorkers && spin < 10_000; spin++ {
				runtime.Gosched()
			}
			return "", errDeclined
		}
	}
	for w := range raceWorkers {
		wg.Go(func() {
			for !start.Load() {
				runtime.Gosched()
			}
			for i := range releaseRounds {
				key := fmt.Sprintf("w%d-%d", w, i)
				_, err1 := s.Do(context.Background(), key, fail(i))
				v, err2 := s.Do(context.Background(), key, c.work(nil, "", key, nil, "ok", nil))
				if err1 != errDeclined || err2 != nil || v != "ok" {
					mu.Lock()
					wrong = append(wrong, fmt.Sprintf("Do(%q) failing = %v, then Do(%q) = %s, want the work's error, then %q, nil", key, err1, key, s.describe(v, err2), "ok"))
					mu.Unlock()
				}
			}
		})
	}
	start.Store(true)
	wg.Wait()
	if len(wrong) > 0 {
		t.Errorf("with %d workers failing and retrying their own keys at once, %d of %d retries went wrong; the first: %s", raceWorkers, len(wrong), raceWorkers*releaseRounds, wrong[0])
	}
}

// releaseRounds is how many keys each worker fails and retries at once
// with the others in checkFailureReleases.
const releaseRounds = 25

// checkKeysCompareExactly uses keys that a store that "cleans up" keys
// would merge: each is its own key, runs its own work, and is answered
// with its own stored result afterwards. Among them are the empty key and
// invalid UTF-8 bytes, which a []rune conversion turns into one U+FFFD.
func checkKeysCompareExactly(t *testing.T, h *suites.History, s target) {
	keys := []string{"task-42", "Task-42", "task-42 ", " task-42", "caf\u00e9", "cafe\u0301", "", " ", "\xff", "\xfe", "\ufffd", "a\x00", "a"}
	counters := make([]counter, len(keys))
	want := func(key string) string { return "result for " + strconv.Quote(key) }
	for i, key := range keys {
		v, err := s.do(h, "worker A", key, counters[i].work(h, "worker A", key, nil, want(key), nil))
		if err != nil || v != want(key) {
			t.Errorf(`Do(%+q) = %+q, %v, want %+q, nil: no other key may answer for it (keys are compared byte for byte)`, key, v, err, want(key))
		}
		if n := counters[i].n.Load(); n != 1 {
			t.Errorf("work ran %d times for the new key %+q, want 1", n, key)
		}
	}
	// Every key is now done, each with its own result.
	for i, key := range keys {
		before := counters[i].n.Load()
		v, err := s.do(h, "worker B", key, counters[i].work(h, "worker B", key, nil, "executed again", nil))
		if err != nil || v != want(key) {
			t.Errorf(`Do(%+q) after its work succeeded with %+q = %+q, %v, want the stored %+q, nil: every key, the empty one too, has its own record`, key, want(key), v, err, want(key))
		}
		if n := counters[i].n.Load(); n != before {
			t.Errorf("work ran again for %+q, whose work had already succeeded, want it run once in all", key)
		}
	}
}

func checkKeysIndependent(t *testing.T, h *suites.History, s target) {
	var slow, fast counter
	gate := make(chan struct{})
	first, _ := s.startSlow(h, &slow, "worker A", "slow-key", gate, "slow result")
	var r result
	other := suites.Go(func() {
		r.value, r.err = s.do(h, "worker B", "fast-key", fast.work(h, "worker B", "fast-key", nil, "fast result", nil))
	})
	blocked := !other.Settle()
	if blocked {
		h.Note("worker B's Do(\"fast-key\") is waiting for worker A's work on slow-key")
	}
	h.Note("worker A's work on slow-key finishes")
	close(gate)
	other.Wait()
	first.Wait()
	if blocked {
		t.Errorf(`Do("fast-key") waited for the work of another key ("slow-key") to finish, want it to run at once`)
	}
	if r.err != nil || r.value != "fast result" {
		t.Errorf(`Do("fast-key") = %q, %v, want "fast result", nil`, r.value, r.err)
	}
}
