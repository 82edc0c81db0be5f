// Package claimsuite is the conformance suite of lab 01 (claim before you
// execute). Run checks any implementation of Store; the lab's test file, the
// reference solution's test file and the grader all call it the same way:
//
//	func TestClaim(t *testing.T) { claimsuite.Run(t, New, ErrInProgress) }
package claimsuite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
)

// Store is what lab 01 builds: Do runs work at most once per key.
type Store interface {
	Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error)
}

// Lab is the rubric of lab 01: its concepts and cases.
var Lab = suites.Lab{
	Number:   1,
	Slug:     "claim",
	Title:    "Claim before you execute",
	TestName: "TestClaim",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/01-claim.md"

var concepts = []suites.Concept{
	{
		ID:            "atomic-claim",
		Title:         "The claim is one atomic step",
		Misconception: "Looking the key up and then inserting it is the same as claiming it, as long as each step is safe on its own.",
		Hint:          "Find the moment where two callers can both have seen \"no record\". The lookup and the insert of the pending record must happen in one step that nobody can interleave with.",
		Docs:          docs + "#the-claim-is-one-atomic-step",
	},
	{
		ID:            "claim-before-execute",
		Title:         "Claim before you execute",
		Misconception: "It is enough to record the key once the work has finished: duplicates will find it then.",
		Hint:          "Ask what a duplicate sees while the first caller's work is still running. The record has to exist before the work starts, not after.",
		Docs:          docs + "#claim-before-you-execute",
	},
	{
		ID:            "pending-vs-complete",
		Title:         "Pending is not complete",
		Misconception: "A key that has been claimed has succeeded, so a duplicate can be answered with success.",
		Hint:          "A pending record has no result yet. The duplicate must learn that the work is in progress (a distinct error it can test with errors.Is), not receive an empty success.",
		Docs:          docs + "#pending-is-not-complete",
	},
	{
		ID:            "stored-result",
		Title:         "The result is stored and replayed",
		Misconception: "Once the work is done the key can be forgotten; duplicates only matter while the work runs.",
		Hint:          "Retries arrive late: after a timeout, after a redelivery, after a restart. Keep the completed record and answer duplicates from it.",
		Docs:          docs + "#the-result-is-stored-and-replayed",
	},
	{
		ID:            "failure-release",
		Title:         "A failure must not leave the key stuck",
		Misconception: "If the work fails, the pending record can simply stay where it is.",
		Hint:          "Follow a key whose work returned an error: what does the next attempt with the same key get, now and in an hour? This lab releases the claim on failure.",
		Docs:          docs + "#a-failure-must-not-leave-the-key-stuck",
	},
	{
		ID:            "per-key-isolation",
		Title:         "Different keys never wait for each other",
		Misconception: "One lock around the whole operation is the simplest way to make it safe.",
		Hint:          "Hold a lock only for the claim and the record updates, never while the work runs. Work for another key must be able to start at once.",
		Docs:          docs + "#different-keys-never-wait-for-each-other",
	},
	{
		ID:            "results-unchanged",
		Title:         "Results come back unchanged",
		Misconception: "The store may wrap, copy or replace what the work returned.",
		Hint:          "Return the work's value and error exactly as they came back, so callers can still use errors.Is and compare values.",
		Docs:          docs + "#results-come-back-unchanged",
	},
}

type test = suites.Test[Store]

type target struct {
	store         Store
	errInProgress error
}

// Run runs lab 01's suite. newStore must return a new, empty store each time
// it is called; errInProgress is the sentinel a duplicate of a pending key is
// told (matched with errors.Is).
func Run[S Store](t *testing.T, newStore func() S, errInProgress error) {
	t.Helper()
	if errInProgress == nil {
		t.Fatal("claimsuite.Run: errInProgress is nil; pass the sentinel your Do wraps for a pending key")
	}
	inProgress = errInProgress
	suites.Run(t, Lab, tests, func(*testing.T) Store { return newStore() })
}

// inProgress is the implementation's sentinel for the case being run. Run is
// called once per test binary, so a package variable is enough.
var inProgress error

var tests = []test{
	{
		Case: suites.Case{
			Name:        "results_returned_unchanged",
			Concept:     "results-unchanged",
			Points:      10,
			Explanation: "The first call with a new key runs the work once and returns exactly what it produced: the same value, or the very same error value, so callers can still match it with errors.Is.",
		},
		Check: checkFirstCall,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_duplicates_execute_once",
			Concept:     "claim-before-execute",
			Points:      20,
			Explanation: "Twenty workers submit the same key while the first one is still working. The work must run exactly once; otherwise a retry charges the customer twice.",
		},
		Check: checkConcurrentDuplicates,
	},
	{
		Case: suites.Case{
			Name:        "simultaneous_claims_execute_once",
			Concept:     "atomic-claim",
			Points:      15,
			Explanation: "Eight workers released at the same instant race for one key, round after round, until the machine has shown it really runs claims in parallel. Exactly one may win each race: the lookup and the insert must be a single atomic step.",
		},
		Check: checkSimultaneousClaims,
	},
	{
		Case: suites.Case{
			Name:        "pending_duplicate_is_told_in_progress",
			Concept:     "pending-vs-complete",
			Points:      15,
			Explanation: "A duplicate that arrives while the work runs must get an \"in progress\" error (errors.Is with the lab's sentinel), never an empty success and never a second execution.",
		},
		Check: checkPendingDuplicate,
	},
	{
		Case: suites.Case{
			Name:        "completed_duplicate_gets_stored_result",
			Concept:     "stored-result",
			Points:      15,
			Explanation: "A duplicate that arrives after the work succeeded, even an hour later, gets the stored value without running the work again.",
		},
		Check: checkCompletedDuplicate,
	},
	{
		Case: suites.Case{
			Name:        "failed_execution_releases_key",
			Concept:     "failure-release",
			Points:      15,
			Explanation: "When the work fails, the caller gets that failure and the key is released, so the next attempt with the same key runs the work again instead of being told \"in progress\" forever.",
		},
		Check: checkFailureReleases,
	},
	{
		Case: suites.Case{
			Name:        "different_keys_do_not_block_each_other",
			Concept:     "per-key-isolation",
			Points:      10,
			Explanation: "While slow work runs for one key, work for another key starts and finishes at once. A lock held during execution would serialise every customer behind the slowest one.",
		},
		Check: checkKeysIndependent,
	},
}

// counter wraps a work function so the suite knows how often it ran.
type counter struct {
	n atomic.Int64
}

// work returns a work function that counts and narrates its executions,
// waits for gate (if not nil) and then returns value and err. Work never
// sleeps on the clock while other callers may be waiting: an implementation
// that holds a mutex during the work would freeze a fakeclock bubble (see
// suites.Call), so the suite gates work with channels it controls.
func (c *counter) work(h *suites.History, actor string, gate <-chan struct{}, value string, err error) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		n := c.n.Add(1)
		if h == nil {
			// Quiet: the caller narrates.
		} else if n == 1 {
			h.Record(actor, "work starts", "first execution")
		} else {
			h.Recordf(actor, "work starts", "EXECUTION #%d: the side effect happened again", n)
		}
		if gate != nil {
			<-gate
		}
		return value, err
	}
}

// started returns a gate-like channel closed by the work's first execution,
// and a work wrapper that closes it.
func notifyStart(work func(context.Context) (string, error)) (<-chan struct{}, func(context.Context) (string, error)) {
	ch := make(chan struct{})
	var once sync.Once
	return ch, func(ctx context.Context) (string, error) {
		once.Do(func() { close(ch) })
		return work(ctx)
	}
}

func describe(value string, err error) string {
	switch {
	case err == nil:
		return fmt.Sprintf("returned %q, nil", value)
	case errors.Is(err, inProgress):
		return fmt.Sprintf("returned %q, in progress (%v)", value, err)
	default:
		return fmt.Sprintf("returned %q, error %v", value, err)
	}
}

type result struct {
	value string
	err   error
}

// startSlow starts actor's Do(key) with work held at gate, and returns once
// the work has started (or Do has returned without starting it).
func startSlow(h *suites.History, s Store, c *counter, actor, key string, gate <-chan struct{}, value string) (*suites.Call, *result) {
	var r result
	startedCh, work := notifyStart(c.work(h, actor, gate, value, nil))
	call := suites.Go(func() {
		r.value, r.err = s.Do(context.Background(), key, work)
		h.Record(actor, fmt.Sprintf("Do(%q)", key), describe(r.value, r.err))
	})
	select {
	case <-startedCh:
	case <-call.Finished():
	}
	return call, &r
}

func checkFirstCall(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		var c counter
		got, err := s.Do(context.Background(), "k1", c.work(h, "worker A", nil, "signed:doc-42", nil))
		h.Record("worker A", `Do("k1")`, describe(got, err))
		if err != nil || got != "signed:doc-42" {
			t.Errorf(`Do("k1") = %q, %v, want "signed:doc-42", nil`, got, err)
		}
		if n := c.n.Load(); n != 1 {
			t.Errorf(`work ran %d times for one Do("k1"), want 1`, n)
		}

		var failing counter
		got, err = s.Do(context.Background(), "k2", failing.work(h, "worker A", nil, "", errDeclined))
		h.Record("worker A", `Do("k2")`, describe(got, err))
		if err != errDeclined {
			t.Errorf(`Do("k2") with work failing with %q = %q, %v, want "", the work's own error value (not a copy or a wrapper)`, errDeclined, got, err)
		}
	})
}

func checkConcurrentDuplicates(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		const workers = 20
		var c counter
		gate := make(chan struct{})
		first, firstResult := startSlow(h, s, &c, "worker 00", "k1", gate, "signed:doc-42")
		calls := []*suites.Call{first}
		for i := 1; i < workers; i++ {
			actor := fmt.Sprintf("worker %02d", i)
			calls = append(calls, suites.Go(func() {
				v, err := s.Do(context.Background(), "k1", c.work(h, actor, gate, "signed:doc-42", nil))
				h.Record(actor, `Do("k1")`, describe(v, err))
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
	})
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
)

func checkSimultaneousClaims(t *testing.T, h *suites.History, s Store) {
	// Claims can only overlap with at least two Ps running goroutines.
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	var broken checkThenInsert
	hits := 0
	round := 0
	for ; round < maxRaceRounds && hits < calibrationHits; round++ {
		if round == maxRaceRounds/10 && hits == 0 {
			break // this machine does not interleave at all; stop early
		}
		key := fmt.Sprintf("k%d", round)
		n, lines := raceRound(s, key)
		if n != 1 {
			h.Note("round %d: %d workers released together on key %q", round+1, raceWorkers, key)
			for _, l := range lines {
				h.Note("%s", l)
			}
			h.Note("work ran %d times", n)
			t.Fatalf("round %d: %d workers raced for key %q and the work ran %d times, want 1 (%s)", round+1, raceWorkers, key, n, lines[0])
		}
		if n, _ := raceRound(&broken, key); n > 1 {
			hits++
		}
	}
	if hits < calibrationHits {
		t.Logf("inconclusive: in %d rounds this machine interleaved claims only %d times (the race detector and more cores help); the claim was not caught double-executing", round, hits)
	}
}

// raceRound releases raceWorkers goroutines at once on one key and returns
// how many times the work ran, with one line per worker.
func raceRound(s Store, key string) (int64, []string) {
	var c counter
	var release atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lines []string
	for i := range raceWorkers {
		wg.Go(func() {
			for !release.Load() {
				runtime.Gosched()
			}
			v, err := s.Do(context.Background(), key, c.work(nil, "", nil, "ok", nil))
			mu.Lock()
			lines = append(lines, fmt.Sprintf("worker %d Do(%q) %s", i, key, describe(v, err)))
			mu.Unlock()
		})
	}
	release.Store(true)
	wg.Wait()
	return c.n.Load(), lines
}

// checkThenInsert is the calibration store: a claim split into a locked
// lookup and a separately locked insert, the bug the case is looking for.
type checkThenInsert struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (b *checkThenInsert) Do(ctx context.Context, key string, work func(context.Context) (string, error)) (string, error) {
	b.mu.Lock()
	claimed := b.seen[key]
	b.mu.Unlock()
	if claimed {
		return "", inProgress
	}
	b.mu.Lock()
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[key] = true
	b.mu.Unlock()
	return work(ctx)
}

func checkPendingDuplicate(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		var c counter
		gate := make(chan struct{})
		first, _ := startSlow(h, s, &c, "worker A", "k1", gate, "signed:doc-42")
		var r result
		dup := suites.Go(func() {
			r.value, r.err = s.Do(context.Background(), "k1", c.work(h, "worker B", nil, "signed:doc-42", nil))
			h.Record("worker B", `Do("k1")`, describe(r.value, r.err))
		})
		if !dup.Settle() {
			h.Note("worker B's Do(\"k1\") is still waiting for worker A's work")
			t.Errorf(`Do("k1") while the first call is working blocked until that work finished, want an immediate error wrapping %v`, inProgress)
		}
		close(gate)
		dup.Wait()
		first.Wait()
		if !errors.Is(r.err, inProgress) {
			t.Errorf(`Do("k1") while the first call is working = %q, %v, want an error wrapping %v`, r.value, r.err, inProgress)
		}
		if n := c.n.Load(); n != 1 {
			t.Errorf("work ran %d times for a key whose first call was still working, want 1", n)
		}
	})
}

func checkCompletedDuplicate(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		var c counter
		v, err := s.Do(context.Background(), "k1", c.work(h, "worker A", nil, "signed:doc-42", nil))
		h.Record("worker A", `Do("k1")`, describe(v, err))
		if err != nil {
			t.Fatalf(`first Do("k1") = %q, %v, want "signed:doc-42", nil`, v, err)
		}
		for _, later := range []time.Duration{time.Second, time.Hour} {
			fakeclock.Advance(later)
			v, err := s.Do(context.Background(), "k1", c.work(h, "worker B", nil, "signed:doc-42 (again)", nil))
			h.Record("worker B", `Do("k1")`, describe(v, err))
			if err != nil || v != "signed:doc-42" {
				t.Errorf(`Do("k1") %v after completion = %q, %v, want the stored "signed:doc-42", nil`, later, v, err)
			}
		}
		if n := c.n.Load(); n != 1 {
			t.Errorf("work ran %d times for a key that had already completed, want 1", n)
		}
	})
}

// errDeclined is the failure the work returns in checkFailureReleases.
var errDeclined = errors.New("card declined")

func checkFailureReleases(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		var c counter
		v, err := s.Do(context.Background(), "k1", c.work(h, "worker A", nil, "", errDeclined))
		h.Record("worker A", `Do("k1")`, describe(v, err))
		if err == nil {
			t.Errorf(`Do("k1") with failing work = %q, nil, want the work's error`, v)
		}
		fakeclock.Advance(time.Minute)
		v, err = s.Do(context.Background(), "k1", c.work(h, "worker A (retry)", nil, "signed:doc-42", nil))
		h.Record("worker A (retry)", `Do("k1")`, describe(v, err))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`retry Do("k1") after a failure = %q, %v, want "signed:doc-42", nil (the key must be released)`, v, err)
		}
		if n := c.n.Load(); n != 2 {
			t.Errorf("work ran %d times (one failure, one retry), want 2", n)
		}
	})
}

func checkKeysIndependent(t *testing.T, h *suites.History, s Store) {
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		var slow, fast counter
		gate := make(chan struct{})
		first, _ := startSlow(h, s, &slow, "worker A", "slow-key", gate, "slow result")
		var r result
		other := suites.Go(func() {
			r.value, r.err = s.Do(context.Background(), "fast-key", fast.work(h, "worker B", nil, "fast result", nil))
			h.Record("worker B", `Do("fast-key")`, describe(r.value, r.err))
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
	})
}
