package claimsuite

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
)

func checkFirstCall(t *testing.T, h *suites.History, s target) {
	var c counter
	got, err := s.do(h, "worker A", "k1", c.work(h, "worker A", nil, "signed:doc-42", nil))
	if err != nil || got != "signed:doc-42" {
		t.Errorf(`Do("k1") = %q, %v, want "signed:doc-42", nil`, got, err)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf(`work ran %d times for one Do("k1"), want 1`, n)
	}

	var failing counter
	got, err = s.do(h, "worker A", "k2", failing.work(h, "worker A", nil, "", errDeclined))
	if err != errDeclined {
		t.Errorf(`Do("k2") with work failing with %q = %q, %v, want "", the work's own error value (not a copy or a wrapper)`, errDeclined, got, err)
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
			s.do(h, actor, "k1", c.work(h, actor, gate, "signed:doc-42", nil))
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
)

func checkSimultaneousClaims(t *testing.T, h *suites.History, s target) {
	// Claims can only overlap with at least two Ps running goroutines.
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	broken := target{Store: &checkThenInsert{errInProgress: s.errInProgress}, errInProgress: s.errInProgress}
	hits := 0
	round := 0
	for ; round < maxRaceRounds && hits < calibrationHits; round++ {
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
		t.Logf("inconclusive: in %d rounds this machine interleaved claims only %d times (the race detector and more cores help); the claim was not caught double-executing", round, hits)
	}
}

func checkPendingDuplicate(t *testing.T, h *suites.History, s target) {
	var c counter
	gate := make(chan struct{})
	first, _ := s.startSlow(h, &c, "worker A", "k1", gate, "signed:doc-42")
	var r result
	dup := suites.Go(func() {
		r.value, r.err = s.do(h, "worker B", "k1", c.work(h, "worker B", nil, "signed:doc-42", nil))
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

func checkCompletedDuplicate(t *testing.T, h *suites.History, s target) {
	var c counter
	v, err := s.do(h, "worker A", "k1", c.work(h, "worker A", nil, "signed:doc-42", nil))
	if err != nil {
		t.Fatalf(`first Do("k1") = %q, %v, want "signed:doc-42", nil`, v, err)
	}
	for _, later := range []time.Duration{time.Second, time.Hour} {
		fakeclock.Advance(later)
		v, err := s.do(h, "worker B", "k1", c.work(h, "worker B", nil, "signed:doc-42 (again)", nil))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`Do("k1") %v after completion = %q, %v, want the stored "signed:doc-42", nil`, later, v, err)
		}
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("work ran %d times for a key that had already completed, want 1", n)
	}
}

func checkFailureReleases(t *testing.T, h *suites.History, s target) {
	var c counter
	v, err := s.do(h, "worker A", "k1", c.work(h, "worker A", nil, "", errDeclined))
	if err == nil {
		t.Errorf(`Do("k1") with failing work = %q, nil, want the work's error`, v)
	}
	fakeclock.Advance(time.Minute)
	v, err = s.do(h, "worker A (retry)", "k1", c.work(h, "worker A (retry)", nil, "signed:doc-42", nil))
	if err != nil || v != "signed:doc-42" {
		t.Errorf(`retry Do("k1") after a failure = %q, %v, want "signed:doc-42", nil (the key must be released)`, v, err)
	}
	if n := c.n.Load(); n != 2 {
		t.Errorf("work ran %d times (one failure, one retry), want 2", n)
	}
}

func checkKeysIndependent(t *testing.T, h *suites.History, s target) {
	var slow, fast counter
	gate := make(chan struct{})
	first, _ := s.startSlow(h, &slow, "worker A", "slow-key", gate, "slow result")
	var r result
	other := suites.Go(func() {
		r.value, r.err = s.do(h, "worker B", "fast-key", fast.work(h, "worker B", nil, "fast result", nil))
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
