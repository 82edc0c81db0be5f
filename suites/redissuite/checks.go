package redissuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites"
)

func checkRestart(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a := e.proc("worker A")
	var first, again counter
	v, err := a.Do("acme", "order-1", "fp:doc-42", first.work(h, "worker A", "signed:doc-42"))
	if err != nil || v != "signed:doc-42" {
		t.Fatalf(`Do("acme", "order-1") = %q, %v, want "signed:doc-42", nil`, v, shortErr(err))
	}
	if _, err := a.Claim("acme", "order-2", "fp:doc-43"); err != nil {
		t.Fatalf(`Claim("acme", "order-2") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	if len(e.keys()) == 0 {
		t.Fatalf("no key under Options.Prefix %q after a Do and a Claim: the store must keep its records in Redis, under the prefix it was given", e.prefix)
	}
	if e.virtual {
		if out := e.keysOutsidePrefix(); len(out) > 0 {
			t.Errorf("the store wrote the key %q, which does not start with Options.Prefix %q; every key must start with the prefix", out[0], e.prefix)
		}
	}

	h.Note("worker A's process dies; a new process starts: a new store on a new connection to the same server")
	a.close()
	b := e.proc("worker A (restarted)")
	v, err = b.Do("acme", "order-1", "fp:doc-42", again.work(h, "worker A (restarted)", "signed:doc-42 (again)"))
	if err != nil || v != "signed:doc-42" {
		t.Errorf(`after a restart, Do("acme", "order-1") = %q, %v, want the stored "signed:doc-42", nil: the completed record must be in Redis, not in the old process`, v, shortErr(err))
	}
	v, err = b.Do("acme", "order-2", "fp:doc-43", again.work(h, "worker A (restarted)", "signed:doc-43"))
	if !errors.Is(err, errs.InProgress) {
		t.Errorf(`after a restart, Do("acme", "order-2") = %q, %v, want an error wrapping %q: the claim taken before the restart is still pending in Redis`, v, shortErr(err), errs.InProgress)
	}
	if n := again.n.Load(); n != 0 {
		t.Errorf("after the restart the work ran %d times for keys that were already completed or claimed, want 0", n)
	}
}

func checkConcurrentClients(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	const workers = 5
	procs := make([]*proc, workers)
	for i := range procs {
		procs[i] = e.proc(fmt.Sprintf("worker %c", 'A'+i))
	}
	h.Note("%d processes call Do(\"acme\", \"order-1\") at once; each command waits until every process has sent its previous one", workers)
	ls := e.lockstep(procs)
	gate := make(chan struct{})
	var c counter
	type result struct {
		v        string
		err      error
		executed bool
	}
	results := make([]result, workers)
	calls := make([]*suites.Call, workers)
	for i, p := range procs {
		w := ls.workers[i]
		calls[i] = e.goCall(func() {
			defer w.state.Store(stepFinished)
			v, err := p.Do("acme", "order-1", "fp:doc-42", func(context.Context) (string, error) {
				w.state.Store(stepInWork)
				results[i].executed = true
				c.executed(h, p.name)
				<-gate
				w.state.Store(stepRunning)
				return "signed:doc-42", nil
			})
			results[i].v, results[i].err = v, err
		})
		// One process at a time reaches its first gate (or returns), so
		// the timeline lists them in the same order on every run.
		calls[i].Settle()
	}
	stuck := ls.conduct(func() {
		h.Note("the work is let go")
		close(gate)
	})
	for _, call := range calls {
		call.Wait()
	}
	if len(stuck) > 0 {
		t.Fatalf("%s neither reached Redis nor returned while the other processes waited: separate processes must not wait for each other inside the store (a lock shared by every Store?)", strings.Join(stuck, ", "))
	}
	switch n := c.n.Load(); {
	case n == 0:
		t.Fatalf(`%d processes called Do("acme", "order-1") together and none of them ran the work (worker A got %q, %v), want exactly one to run it`, workers, results[0].v, shortErr(results[0].err))
	case n > 1:
		t.Fatalf(`%d processes called Do("acme", "order-1") together: the work ran %d times, want exactly 1; only one atomic command (SET ... NX) may decide who claims the key`, workers, n)
	}
	for i, r := range results {
		switch {
		case r.executed && (r.err != nil || r.v != "signed:doc-42"):
			t.Errorf(`%s: Do("acme", "order-1") that ran the work = %q, %v, want "signed:doc-42", nil`, procs[i].name, r.v, shortErr(r.err))
		case !r.executed && !errors.Is(r.err, errs.InProgress):
			t.Errorf(`%s: Do("acme", "order-1") while another process held the claim = %q, %v, want an error wrapping %q`, procs[i].name, r.v, shortErr(r.err), errs.InProgress)
		}
	}
	for _, p := range procs {
		v, err := p.Do("acme", "order-1", "fp:doc-42", c.work(h, p.name, "signed:doc-42 (again)"))
		if err != nil || v != "signed:doc-42" {
			t.Errorf(`%s: Do("acme", "order-1") after the work completed = %q, %v, want the stored "signed:doc-42", nil`, p.name, v, shortErr(err))
		}
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("the work ran %d times in total, want 1", n)
	}
}

func checkCrashBetweenCommands(t *testing.T, h *suites.History, e *env) {
	const maxCommands = 12
	sawKey := false
	for k := int64(1); k <= maxCommands; k++ {
		var c counter // one per key: each key's work runs once
		key := fmt.Sprintf("order-%d", k)
		p := e.proc(fmt.Sprintf("worker %d", k))
		p.crashAt.Store(k)
		want := "signed:doc-" + key
		label := fmt.Sprintf("Do(%q, %q)", "acme", key)
		// At the moment of the crash, take a snapshot of the keys: the
		// dead process's TTLs may run out while the suite looks.
		type snapshot struct {
			keys []keyInfo
			err  error
		}
		crashed := make(chan snapshot, 1)
		onCrash := func() {
			keys, err := e.scan(e.prefix+"*", true)
			crashed <- snapshot{keys, err}
		}
		p.onCrash.Store(&onCrash)
		var v string
		var err error
		call := e.goCall(func() {
			v, err = p.store.Do(context.Background(), "acme", key, "fp:"+key, c.work(h, p.name, want))
		})
		timer := time.NewTimer(promptly)
		var snap snapshot
		select {
		case snap = <-crashed:
		case <-call.Done():
			if p.crashed.Load() {
				snap = <-crashed
				break
			}
			// Do needed no more than k commands: every boundary has
			// been tried.
			timer.Stop()
			h.Record(p.name, label, e.describe(v, err))
			if err != nil || v != want {
				t.Errorf(`%s = %q, %v, want %q, nil`, label, v, shortErr(err), want)
			} else if !sawKey && k > 1 {
				t.Errorf("no key under Options.Prefix %q after any of the crashes inside Do: the store must write its claim to Redis, under the prefix it was given, before the work runs", e.prefix)
			}
			return
		case <-timer.C:
			h.Record(p.name, label, "has not returned")
			t.Fatalf("%s had not returned after %v, want it to finish", label, promptly)
		}
		timer.Stop()
		if snap.err != nil {
			t.Fatal(snap.err)
		}
		for _, ki := range snap.keys {
			sawKey = true
			if ki.pttl == -1 {
				h.Recordf("test", "PTTL "+e.short(ki.name), "-1: no expiry, locked forever")
				t.Errorf("after a crash right after command %d (%s), the key %s has no TTL (PTTL -1): its owner will never come back to complete or release it, so nobody can claim %q ever again; set the claim and its expiry in one command (SET key value NX PX ttl)",
					k, p.cmd(k), e.short(ki.name), key)
			}
		}
		// The dead process's goroutine is still running in this
		// simulation; give it its connection back so that it ends.
		p.crashAt.Store(0)
		call.Wait()
		if t.Failed() {
			return
		}
		if k == maxCommands {
			h.Note("Do sent more than %d commands; the suite stops crashing it there", maxCommands)
		}
	}
}

func checkAbandonedClaim(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b := e.proc("worker A"), e.proc("worker B")
	if _, err := a.Claim("acme", "order-1", "fp:doc-42"); err != nil {
		t.Fatalf(`Claim("acme", "order-1") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	h.Note("worker A's process dies while working: it never completes or releases its claim")
	a.close()

	var c counter
	e.advance(e.ClaimTTL - e.Margin)
	v, err := b.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker B", "signed by B"))
	if !errors.Is(err, errs.InProgress) || c.n.Load() > 0 {
		t.Errorf(`Do("acme", "order-1") %v after worker A claimed it = %q, %v, want an error wrapping %q: the claim (ClaimTTL %v) has not expired yet`,
			e.ClaimTTL-e.Margin, v, shortErr(err), errs.InProgress, e.ClaimTTL)
		return
	}
	e.advance(2 * e.Margin)
	v, err = b.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker B", "signed by B"))
	if err != nil || v != "signed by B" {
		t.Errorf(`Do("acme", "order-1") %v after worker A claimed it = %q, %v, want the work to run ("signed by B", nil): worker A died, and its claim must expire by itself after ClaimTTL (%v)`,
			e.ClaimTTL+e.Margin, v, shortErr(err), e.ClaimTTL)
		return
	}
	checkVanishingHolder(t, h, e)
	if t.Failed() || !e.virtual {
		return
	}
	// To the millisecond: a store whose ClaimTTL is not a whole number of
	// seconds.
	const claimTTL, margin = 1500 * time.Millisecond, 100 * time.Millisecond
	d := e.procWith("worker D (ClaimTTL 1.5s)", Options{Prefix: e.prefix, ClaimTTL: claimTTL, Retention: e.Retention})
	if _, err := d.Claim("acme", "order-3", "fp:doc-44"); err != nil {
		t.Fatalf(`Claim("acme", "order-3") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	h.Note("worker D dies holding its claim")
	e.advance(claimTTL - margin)
	v, err = b.Do("acme", "order-3", "fp:doc-44", c.work(h, "worker B", "signed:doc-44"))
	if !errors.Is(err, errs.InProgress) {
		t.Errorf(`Do("acme", "order-3") %v after a store with ClaimTTL %v claimed it = %q, %v, want an error wrapping %q: the claim lasts ClaimTTL to the millisecond, not whole seconds`, claimTTL-margin, claimTTL, v, shortErr(err), errs.InProgress)
		return
	}
	e.advance(2 * margin)
	v, err = b.Do("acme", "order-3", "fp:doc-44", c.work(h, "worker B", "signed:doc-44"))
	if err != nil || v != "signed:doc-44" {
		t.Errorf(`Do("acme", "order-3") %v after a store with ClaimTTL %v claimed it = %q, %v, want the work to run ("signed:doc-44", nil)`, claimTTL+margin, claimTTL, v, shortErr(err))
	}
}

// checkVanishingHolder has worker B's Claim find the key held by worker A,
// and stalls B before its next command while A's claim expires. B must not
// come back with a claim it never wrote: if its work runs, it must be able
// to complete it.
func checkVanishingHolder(t testing.TB, h *suites.History, e *env) {
	t.Helper()
	a, b, c := e.proc("worker E"), e.proc("worker F"), e.proc("worker G")
	if _, err := a.Claim("acme", "order-2", "fp:doc-43"); err != nil {
		t.Fatalf(`worker E: Claim("acme", "order-2") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	held := make(chan string, 1)
	resume := make(chan struct{})
	start := b.sent.Load()
	g := gateFunc(func(n int64, cmd string) {
		if n == start+2 {
			held <- cmd
			<-resume
		}
	})
	b.gate.Store(&g)
	var w counter
	var v string
	var err error
	call := e.goCall(func() {
		v, err = b.store.Do(context.Background(), "acme", "order-2", "fp:doc-43", w.work(h, b.name, "signed by F"))
	})
	select {
	case cmd := <-held:
		e.h.Recordf(b.name, `Do("acme", "order-2")`, "found the key held; its connection stalls before %s", cmd)
		e.h.Note("worker E dies; its claim expires while worker F is stalled")
		e.advance(e.ClaimTTL + e.Margin)
		close(resume)
		call.Wait()
	case <-call.Done():
		// One command settled it: there was no gap to stall in.
		close(resume)
	}
	b.gate.Store(nil)
	h.Record(b.name, `Do("acme", "order-2")`, e.describe(v, err))
	if w.n.Load() == 0 {
		if err == nil {
			t.Errorf(`worker F: Do("acme", "order-2") = %q, nil without running the work, want the work's result or an error`, v)
		}
		return
	}
	if err != nil || v != "signed by F" {
		t.Errorf(`worker F: Do("acme", "order-2"), which ran the work after worker E's claim vanished = %q, %v, want "signed by F", nil: the work may only run under a claim the store really wrote (SET NX again, do not assume the key is yours)`, v, shortErr(err))
		return
	}
	var again counter
	if v, err := c.Do("acme", "order-2", "fp:doc-43", again.work(h, c.name, "signed by G")); err != nil || v != "signed by F" {
		t.Errorf(`worker G: Do("acme", "order-2") after worker F completed it = %q, %v, want F's "signed by F", nil`, v, shortErr(err))
	}
}

func checkRetention(t *testing.T, h *suites.History, e *env) {
	a, b := e.proc("worker A"), e.proc("worker B")
	var c counter
	v, err := a.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker A", "signed:doc-42"))
	if err != nil || v != "signed:doc-42" {
		t.Fatalf(`Do("acme", "order-1") = %q, %v, want "signed:doc-42", nil`, v, shortErr(err))
	}
	e.advance(e.Retention - e.Margin)
	v, err = b.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker B", "signed:doc-42 (again)"))
	if err != nil || v != "signed:doc-42" {
		t.Errorf(`Do("acme", "order-1") %v after it completed = %q, %v, want the stored "signed:doc-42", nil: the retention window is %v, so a late retry must still be deduplicated`,
			e.Retention-e.Margin, v, shortErr(err), e.Retention)
		return
	}
	e.advance(2 * e.Margin)
	// The process that completed the key asks first: it must not answer
	// from anything it remembers itself.
	v, err = a.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker A", "signed:doc-42 (new)"))
	if err != nil || v != "signed:doc-42 (new)" {
		t.Errorf(`worker A: Do("acme", "order-1") %v after it completed it = %q, %v, want the work to run again ("signed:doc-42 (new)", nil): the retention window of %v has passed, so the record must have expired, also for the process that stored it`,
			e.Retention+e.Margin, v, shortErr(err), e.Retention)
	}
	if !e.virtual {
		return
	}
	// Far past the end, and to the millisecond: a store whose retention is
	// not a whole number of seconds.
	if _, err := b.Do("acme", "order-2", "fp:doc-43", c.work(h, "worker B", "signed:doc-43")); err != nil {
		t.Fatalf(`Do("acme", "order-2") = %v, want nil`, shortErr(err))
	}
	e.advance(3 * 24 * time.Hour)
	v, err = b.Do("acme", "order-2", "fp:doc-43", c.work(h, "worker B", "signed:doc-43 (new)"))
	if err != nil || v != "signed:doc-43 (new)" {
		t.Errorf(`Do("acme", "order-2") three days after it completed = %q, %v, want the work to run again ("signed:doc-43 (new)", nil): the retention window is %v`, v, shortErr(err), e.Retention)
	}
	const retention, margin = 2500 * time.Millisecond, 100 * time.Millisecond
	p := e.procWith("worker D (Retention 2.5s)", Options{Prefix: e.prefix, ClaimTTL: e.ClaimTTL, Retention: retention})
	if _, err := p.Do("acme", "order-3", "fp:doc-44", c.work(h, p.name, "signed:doc-44")); err != nil {
		t.Fatalf(`Do("acme", "order-3") = %v, want nil`, shortErr(err))
	}
	e.advance(retention - margin)
	v, err = p.Do("acme", "order-3", "fp:doc-44", c.work(h, p.name, "signed:doc-44 (again)"))
	if err != nil || v != "signed:doc-44" {
		t.Errorf(`Do("acme", "order-3") %v after a store with Retention %v completed it = %q, %v, want the stored "signed:doc-44", nil: the retention counts milliseconds, not whole seconds`, retention-margin, retention, v, shortErr(err))
		return
	}
	e.advance(2 * margin)
	v, err = p.Do("acme", "order-3", "fp:doc-44", c.work(h, p.name, "signed:doc-44 (new)"))
	if err != nil || v != "signed:doc-44 (new)" {
		t.Errorf(`Do("acme", "order-3") %v after a store with Retention %v completed it = %q, %v, want the work to run again ("signed:doc-44 (new)", nil)`, retention+margin, retention, v, shortErr(err))
	}
}

// takeOver has worker A claim order-1, stall past ClaimTTL, and worker B
// claim the expired key. It returns both claims.
func takeOver(t testing.TB, e *env, a, b *proc, key string) (claimA, claimB any) {
	t.Helper()
	claimA, err := a.Claim("acme", key, "fp:doc-42")
	if err != nil {
		t.Fatalf(`worker A: Claim("acme", %q) on a new key = %v, want a held claim and a nil error`, key, shortErr(err))
	}
	e.h.Note("worker A stalls (a long GC pause, a slow provider call) for longer than ClaimTTL")
	e.advance(e.ClaimTTL + e.Margin)
	claimB, err = b.Claim("acme", key, "fp:doc-42")
	if err != nil {
		t.Fatalf(`worker B: Claim("acme", %q) after worker A's claim expired = %v, want a held claim and a nil error`, key, shortErr(err))
	}
	return claimA, claimB
}

// checkStillB verifies, through worker C, that worker B still holds key and
// that B's result is the one stored. what says what worker A did.
func checkStillB(t testing.TB, e *env, b, c *proc, key string, claimB any, what string) {
	t.Helper()
	errs := e.tg.errs
	var n counter
	v, err := c.Do("acme", key, "fp:doc-42", n.work(e.h, "worker C", "signed by C"))
	switch {
	case n.n.Load() > 0:
		t.Errorf(`worker C: Do("acme", %q) while worker B holds the claim ran the work (%q, %v), want an error wrapping %q: %s deleted worker B's claim`, key, v, shortErr(err), errs.InProgress, what)
		return
	case !errors.Is(err, errs.InProgress):
		t.Errorf(`worker C: Do("acme", %q) while worker B holds the claim = %q, %v, want an error wrapping %q: %s replaced worker B's claim`, key, v, shortErr(err), errs.InProgress, what)
		return
	}
	if err := b.Complete(claimB, "signed by B"); err != nil {
		t.Errorf(`worker B: Complete(its claim, "signed by B") = %v, want nil: B still holds the key`, shortErr(err))
		return
	}
	v, err = c.Do("acme", key, "fp:doc-42", n.work(e.h, "worker C", "signed by C"))
	if err != nil || v != "signed by B" {
		t.Errorf(`worker C: Do("acme", %q) after worker B completed = %q, %v, want B's "signed by B", nil`, key, v, shortErr(err))
	}
}

func checkStaleRelease(t *testing.T, h *suites.History, e *env) {
	a, b, c := e.proc("worker A"), e.proc("worker B"), e.proc("worker C")
	claimA, claimB := takeOver(t, e, a, b, "order-1")
	h.Note("worker A wakes up; its work failed, so it releases its claim")
	err := a.Release(claimA)
	checkStillB(t, e, b, c, "order-1", claimB, "worker A's Release")
	if !errors.Is(err, e.tg.errs.ClaimLost) {
		t.Errorf(`worker A: Release(its expired claim) = %v, want an error wrapping %q: A no longer holds the key, B does`, shortErr(err), e.tg.errs.ClaimLost)
	}
}

func checkStaleComplete(t *testing.T, h *suites.History, e *env) {
	a, b, c := e.proc("worker A"), e.proc("worker B"), e.proc("worker C")
	claimA, claimB := takeOver(t, e, a, b, "order-1")
	h.Note("worker A wakes up; its work succeeded, so it completes its claim")
	err := a.Complete(claimA, "signed by A")
	checkStillB(t, e, b, c, "order-1", claimB, "worker A's Complete")
	if !errors.Is(err, e.tg.errs.ClaimLost) {
		t.Errorf(`worker A: Complete(its expired claim, "signed by A") = %v, want an error wrapping %q: A no longer holds the key, B does`, shortErr(err), e.tg.errs.ClaimLost)
	}
}

func checkCompareAndActAtomic(t *testing.T, h *suites.History, e *env) {
	for _, op := range []string{"Release", "Complete"} {
		// Stall worker A's connection before its 2nd command, then
		// (with a fresh key) before its 3rd, and so on, until the
		// operation needs no more commands than that.
		for gap := int64(1); gap <= 6; gap++ {
			if !stallBetweenCommands(t, e, op, gap) || t.Failed() {
				break
			}
		}
		if t.Failed() {
			return
		}
	}
}

// stallBetweenCommands runs worker A's op (Release or Complete) on its own
// claim and holds A's connection before the (gap+1)-th command of op. While
// A is held, its claim expires and worker B claims the key; then A goes on.
// It reports whether A was held at all (false: op needed at most gap
// commands).
func stallBetweenCommands(t testing.TB, e *env, op string, gap int64) bool {
	t.Helper()
	key := fmt.Sprintf("order-%s-%d", strings.ToLower(op), gap)
	a, b, c := e.proc("worker A"), e.proc("worker B"), e.proc("worker C")
	claimA, err := a.Claim("acme", key, "fp:doc-42")
	if err != nil {
		t.Fatalf(`worker A: Claim("acme", %q) on a new key = %v, want a held claim and a nil error`, key, shortErr(err))
	}
	held := make(chan string, 1)
	resume := make(chan struct{})
	start := a.sent.Load()
	g := gateFunc(func(n int64, cmd string) {
		if n == start+gap+1 {
			held <- cmd
			<-resume
		}
	})
	a.gate.Store(&g)
	var opErr error
	action := op + "(its claim)"
	call := e.goCall(func() {
		if op == "Release" {
			opErr = a.store.Release(context.Background(), claimA)
		} else {
			action = op + `(its claim, "signed by A")`
			opErr = a.store.Complete(context.Background(), claimA, "signed by A")
		}
	})
	released := false
	letGo := func() {
		if !released {
			released = true
			close(resume)
			call.Wait()
		}
	}
	defer letGo()

	var next string
	select {
	case next = <-held:
	case <-call.Done():
		e.h.Record("worker A", action, e.describeErr(opErr))
		if opErr != nil {
			t.Errorf("worker A: %s while it holds the claim = %v, want nil", action, shortErr(opErr))
		}
		return false
	}
	e.h.Recordf("worker A", action, "has sent %s; its connection stalls before %s", a.cmd(start+gap), next)
	e.advance(e.ClaimTTL + e.Margin)
	// B runs in its own goroutine: a store that holds a lock shared between
	// processes while A is stalled would block B, and the case must say so
	// instead of hanging.
	var claimB any
	claimed := e.goCall(func() { claimB, err = b.Claim("acme", key, "fp:doc-42") })
	if !e.waitUntil(claimed.Returned) {
		e.h.Record("worker B", fmt.Sprintf("Claim(%q, %q)", "acme", key), "blocked while worker A is stalled")
		letGo()
		claimed.Wait()
		t.Fatalf(`worker B: Claim("acme", %q) did not return while worker A's connection was stalled: separate processes must not wait for each other inside the store (a lock shared by every Store?)`, key)
	}
	if err != nil {
		t.Fatalf(`worker B: Claim("acme", %q) after worker A's claim expired = %v, want a held claim and a nil error`, key, shortErr(err))
	}
	e.h.Note("worker A's connection recovers")
	letGo()
	e.h.Record("worker A", action+" returns", e.describeErr(opErr))
	checkStillB(t, e, b, c, key, claimB,
		fmt.Sprintf("worker A's %s, which checked the token and then acted in a separate command,", op))
	return true
}

func checkTenantScope(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	acme, globex := e.proc("acme's worker"), e.proc("globex's worker")
	var ca, cg counter
	v, err := acme.Do("acme", "order-1", "fp:sign contract", ca.work(h, "acme's worker", "envelope for acme"))
	if err != nil || v != "envelope for acme" {
		t.Fatalf(`Do("acme", "order-1") = %q, %v, want "envelope for acme", nil`, v, shortErr(err))
	}
	v, err = globex.Do("globex", "order-1", "fp:sign contract", cg.work(h, "globex's worker", "envelope for globex"))
	switch {
	case v == "envelope for acme":
		t.Errorf(`Do("globex", "order-1") = %q, %v, want "envelope for globex", nil: globex was replayed acme's result, and its own work never ran`, v, shortErr(err))
	case err != nil || v != "envelope for globex":
		t.Errorf(`Do("globex", "order-1") after acme used the same key = %q, %v, want "envelope for globex", nil: the key belongs to each tenant separately`, v, shortErr(err))
	}

	if _, err := acme.Claim("acme", "order-2", "fp:sign invoice"); err != nil {
		t.Fatalf(`Claim("acme", "order-2") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	v, err = globex.Do("globex", "order-2", "fp:sign invoice", cg.work(h, "globex's worker", "invoice for globex"))
	switch {
	case errors.Is(err, errs.InProgress):
		t.Errorf(`Do("globex", "order-2") while acme holds a claim on its own "order-2" = %q, %v, want "invoice for globex", nil: globex was blocked by another tenant's claim`, v, shortErr(err))
	case err != nil || v != "invoice for globex":
		t.Errorf(`Do("globex", "order-2") while acme holds a claim on its own "order-2" = %q, %v, want "invoice for globex", nil`, v, shortErr(err))
	}

	v, err = acme.Do("acme", "order-1", "fp:sign contract", ca.work(h, "acme's worker", "envelope for acme (again)"))
	if err != nil || v != "envelope for acme" {
		t.Errorf(`Do("acme", "order-1") after globex used the same key = %q, %v, want acme's stored "envelope for acme", nil`, v, shortErr(err))
	}
}

func checkUnambiguousKey(t *testing.T, h *suites.History, e *env) {
	type pair struct{ tenant, key string }
	pairs := [][2]pair{{{"ab", "c"}, {"a", "bc"}}}
	for b := 1; b < 128; b++ {
		d := string(rune(b))
		pairs = append(pairs, [2]pair{{"t" + d + "x", "k"}, {"t", "x" + d + "k"}})
	}
	for _, d := range []string{"::", "→", "\u00a0", "%3A"} {
		pairs = append(pairs, [2]pair{{"t" + d + "x", "k"}, {"t", "x" + d + "k"}})
	}
	// An escape character next to a separator, in both parts: with ":"
	// escaped as "\:" but "\" left alone, ("a\", "b:c") and ("a:b\", "c")
	// are both a\:b\:c.
	marks := []string{":", "\\", "|", "%", "/", " ", "\x01", "::"}
	for _, d1 := range marks {
		for _, d2 := range marks {
			pairs = append(pairs, [2]pair{{"a" + d1, "b" + d2 + "c"}, {"a" + d2 + "b" + d1, "c"}})
		}
	}
	p := e.proc("worker A")
	ctx := context.Background()
	failures := 0
	for _, pr := range pairs {
		one, two := pr[0], pr[1]
		label1 := fmt.Sprintf("Claim(%s, %s)", show(one.tenant), show(one.key))
		label2 := fmt.Sprintf("Claim(%s, %s)", show(two.tenant), show(two.key))
		_, err1 := p.store.Claim(ctx, one.tenant, one.key, "fp:doc")
		if err1 != nil {
			h.Record(p.name, label1, e.describeErr(err1))
			t.Errorf(`%s on a new key = %v, want a held claim and a nil error: a tenant and a key may contain any character but NUL`, label1, shortErr(err1))
			failures++
		} else if _, err2 := p.store.Claim(ctx, two.tenant, two.key, "fp:doc"); err2 != nil {
			h.Record(p.name, label1, "holds the claim")
			h.Record(p.name, label2, e.describeErr(err2))
			t.Errorf(`%s after %s = %v, want a held claim and a nil error: (%s, %s) and (%s, %s) are different keys, but they were stored under one Redis key`,
				label2, label1, shortErr(err2), show(two.tenant), show(two.key), show(one.tenant), show(one.key))
			failures++
		}
		if failures == 3 {
			t.Errorf("stopping after %d failures", failures)
			return
		}
	}
}

func checkFingerprint(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b := e.proc("worker A"), e.proc("worker B")
	var c counter
	v, err := a.DoAs(`Do("acme", "order-1", fingerprint "sign doc-42")`, "acme", "order-1", "sign doc-42", c.work(h, "worker A", "signed:doc-42"))
	if err != nil || v != "signed:doc-42" {
		t.Fatalf(`Do("acme", "order-1") = %q, %v, want "signed:doc-42", nil`, v, shortErr(err))
	}
	h.Note("the client reuses the key order-1 for a different document")
	v, err = b.DoAs(`Do("acme", "order-1", fingerprint "sign doc-43")`, "acme", "order-1", "sign doc-43", c.work(h, "worker B", "signed:doc-43"))
	if !errors.Is(err, errs.FingerprintMismatch) {
		t.Errorf(`Do("acme", "order-1") with fingerprint "sign doc-43", after the key completed with "sign doc-42" = %q, %v, want an error wrapping %q`, v, shortErr(err), errs.FingerprintMismatch)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf(`the work ran %d times, want 1: a key reused for a different request must run nothing`, n)
	}
	v, err = b.DoAs(`Do("acme", "order-1", fingerprint "sign doc-42")`, "acme", "order-1", "sign doc-42", c.work(h, "worker B", "signed:doc-42 (again)"))
	if err != nil || v != "signed:doc-42" {
		t.Errorf(`Do("acme", "order-1") with the original fingerprint after a rejected reuse = %q, %v, want the stored "signed:doc-42", nil`, v, shortErr(err))
	}

	if _, err := a.Claim("acme", "order-2", "sign doc-44"); err != nil {
		t.Fatalf(`Claim("acme", "order-2") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	var c2 counter
	v, err = b.DoAs(`Do("acme", "order-2", fingerprint "sign doc-45")`, "acme", "order-2", "sign doc-45", c2.work(h, "worker B", "signed:doc-45"))
	if !errors.Is(err, errs.FingerprintMismatch) || c2.n.Load() > 0 {
		t.Errorf(`Do("acme", "order-2") with fingerprint "sign doc-45" while "sign doc-44" holds the claim = %q, %v, want an error wrapping %q (not in progress: this request will never be the one that completes)`, v, shortErr(err), errs.FingerprintMismatch)
	}
}

func checkInvalidInput(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	p := e.proc("worker A")
	ctx := context.Background()
	long := strings.Repeat("k", 10<<10)
	bad := []struct{ what, tenant, key string }{
		{"an empty tenant", "", "order-1"},
		{"an empty key", "acme", ""},
		{"a NUL byte in the key", "acme", "order-\x001"},
		{"a NUL byte in the tenant", "ac\x00me", "order-1"},
		{"a key that starts with a NUL byte", "acme", "\x00order-1"},
		{"a tenant that is one NUL byte", "\x00", "order-1"},
		{"a 10 KB key", "acme", long},
		{"a 10 KB tenant", long, "order-1"},
	}
	for _, b := range bad {
		var c counter
		label := fmt.Sprintf("Do(%s, %s)", show(b.tenant), show(b.key))
		v, err := p.DoAs(label, b.tenant, b.key, "fp:doc-42", c.work(h, p.name, "signed:doc-42"))
		if !errors.Is(err, errs.InvalidKey) {
			t.Errorf(`%s with %s = %q, %v, want an error wrapping %q`, label, b.what, v, shortErr(err), errs.InvalidKey)
		}
		if c.n.Load() > 0 {
			t.Errorf(`%s with %s ran the work, want it rejected before anything runs`, label, b.what)
		}
		if _, err := p.store.Claim(ctx, b.tenant, b.key, "fp:doc-42"); !errors.Is(err, errs.InvalidKey) {
			t.Errorf(`Claim(%s, %s) with %s = %v, want an error wrapping %q`, show(b.tenant), show(b.key), b.what, shortErr(err), errs.InvalidKey)
		}
	}
	if keys := e.keys(); len(keys) > 0 {
		t.Errorf("after rejecting bad input, Redis holds %d key(s) (%s), want none: validate before writing", len(keys), show(e.short(keys[0].name)))
	}
	if t.Failed() {
		return
	}
	for _, ok := range []struct{ tenant, key string }{
		{"acme", strings.Repeat("k", 200)},
		{"tenant with spaces", "Bestellung 42 ✓"},
	} {
		var c counter
		v, err := p.Do(ok.tenant, ok.key, "fp:doc-42", c.work(h, p.name, "signed"))
		if err != nil || v != "signed" {
			t.Errorf(`Do(%s, %s) = %q, %v, want "signed", nil: a valid tenant and key (any bytes but NUL, within the documented limits) must work`, show(ok.tenant), show(ok.key), v, shortErr(err))
		}
	}
}

func checkLostServer(t *testing.T, h *suites.History, e *env) {
	p := e.proc("worker A")
	claim, err := p.Claim("acme", "order-1", "fp:doc-42")
	if err != nil {
		t.Fatalf(`Claim("acme", "order-1") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	h.Note("the Redis server goes away: open connections drop, new ones are refused")
	p.cut()
	defer p.restore()

	var completeErr error
	call := e.goCall(func() {
		completeErr = p.store.Complete(context.Background(), claim, "signed:doc-42")
	})
	if !e.returnsPromptly(call, p.storm) {
		h.Record("worker A", `Complete(its claim, "signed:doc-42")`, "has not returned")
		t.Errorf(`Complete(its claim, "signed:doc-42") with the server gone had not returned after %v (%d dials refused), want an error at once: return the error, do not wait or retry until Redis comes back`, promptly, p.dials.Load())
		p.restore()
		call.Wait()
		return
	}
	h.Record("worker A", `Complete(its claim, "signed:doc-42")`, e.describeErr(completeErr))
	if completeErr == nil {
		t.Errorf(`Complete(its claim, "signed:doc-42") with the server gone = nil, want an error: the result was never stored, and a caller told "stored" will not retry`)
	}

	// The result of work that did run cannot be stored either.
	b := e.proc("worker B")
	defer b.restore()
	var cb counter
	var vb string
	var errB error
	call = e.goCall(func() {
		vb, errB = b.store.Do(context.Background(), "acme", "order-3", "fp:doc-44", func(context.Context) (string, error) {
			cb.executed(h, "worker B")
			h.Note("the Redis server goes away while worker B's work runs")
			b.cut()
			return "signed:doc-44", nil
		})
	})
	if !e.returnsPromptly(call, b.storm) {
		h.Record("worker B", `Do("acme", "order-3")`, "has not returned")
		t.Errorf(`Do("acme", "order-3"), whose result could not be stored, had not returned after %v (%d dials refused), want an error at once: return the error, do not wait or retry until Redis comes back`, promptly, b.dials.Load())
		b.restore()
		call.Wait()
		return
	}
	h.Record("worker B", `Do("acme", "order-3")`, e.describe(vb, errB))
	if errB == nil {
		t.Errorf(`Do("acme", "order-3") whose result could not be stored (the server went away during the work) = %q, nil, want an error: the result is not recorded, a retry after ClaimTTL will run the work again, and the caller must hear about it`, vb)
	} else if vb != "signed:doc-44" {
		t.Errorf(`Do("acme", "order-3") whose result could not be stored (the server went away during the work) = %q, %v, want the work's value "signed:doc-44" with the error: the work did run`, vb, shortErr(errB))
	}

	var c counter
	var v string
	var doErr error
	call = e.goCall(func() {
		v, doErr = p.store.Do(context.Background(), "acme", "order-2", "fp:doc-43", c.work(h, "worker A", "signed:doc-43"))
	})
	if !e.returnsPromptly(call, p.storm) {
		h.Record("worker A", `Do("acme", "order-2")`, "has not returned")
		t.Errorf(`Do("acme", "order-2") with the server gone had not returned after %v (%d dials refused), want an error at once: return the error, do not wait or retry until Redis comes back`, promptly, p.dials.Load())
		p.restore()
		call.Wait()
		return
	}
	h.Record("worker A", `Do("acme", "order-2")`, e.describe(v, doErr))
	if doErr == nil {
		t.Errorf(`Do("acme", "order-2") with the server gone = %q, nil, want an error`, v)
	}
	if c.n.Load() > 0 {
		t.Errorf(`Do("acme", "order-2") with the server gone ran the work, want it not to run: without a claim nothing protects it from a duplicate`)
	}
}

func checkLimits(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	p := e.proc("worker A")
	ctx := context.Background()
	// The limits count bytes: "é" is 2 bytes, "😀" is 4.
	good := []struct{ what, tenant, key string }{
		{"a tenant of exactly 128 bytes", strings.Repeat("t", 128), "order-1"},
		{"a key of exactly 256 bytes", "acme", strings.Repeat("k", 256)},
		{`a tenant of 64 × "é" (128 bytes)`, strings.Repeat("é", 64), "order-1"},
		{`a key of 64 × "😀" (256 bytes)`, "acme", strings.Repeat("😀", 64)},
		{`a tenant and a key both at their limits (64 × "é", 128 × "ü")`, strings.Repeat("é", 64), strings.Repeat("ü", 128)},
	}
	for i, g := range good {
		var c counter
		want := fmt.Sprintf("signed %d", i)
		v, err := p.DoAs(fmt.Sprintf("Do(%s, %s)", show(g.tenant), show(g.key)), g.tenant, g.key, "fp:doc-42", c.work(h, p.name, want))
		if err != nil || v != want {
			t.Errorf(`Do with %s = %q, %v, want %q, nil: the limits are MaxTenantLen (128) and MaxKeyLen (256) bytes, inclusive`, g.what, v, shortErr(err), want)
		}
	}
	bad := []struct{ what, tenant, key string }{
		{"a tenant of 129 bytes", strings.Repeat("t", 129), "order-1"},
		{"a key of 257 bytes", "acme", strings.Repeat("k", 257)},
		{`a tenant of 65 × "é" (65 characters, 130 bytes)`, strings.Repeat("é", 65), "order-1"},
		{`a key of 129 × "ü" (129 characters, 258 bytes)`, "acme", strings.Repeat("ü", 129)},
		{`a key of 65 × "😀" (65 characters, 260 bytes)`, "acme", strings.Repeat("😀", 65)},
	}
	before := len(e.keys())
	for _, b := range bad {
		var c counter
		label := fmt.Sprintf("Do(%s, %s)", show(b.tenant), show(b.key))
		v, err := p.DoAs(label, b.tenant, b.key, "fp:doc-42", c.work(h, p.name, "signed"))
		if !errors.Is(err, errs.InvalidKey) || c.n.Load() > 0 {
			t.Errorf(`Do with %s = %q, %v, want an error wrapping %q and no work run: the limits count bytes, not characters`, b.what, v, shortErr(err), errs.InvalidKey)
		}
		if _, err := p.store.Claim(ctx, b.tenant, b.key, "fp:doc-42"); !errors.Is(err, errs.InvalidKey) {
			t.Errorf(`Claim with %s = %v, want an error wrapping %q`, b.what, shortErr(err), errs.InvalidKey)
		}
	}
	if n := len(e.keys()); n != before {
		t.Errorf("rejecting over-long tenants and keys wrote %d key(s) to Redis, want none: validate before writing", n-before)
	}
}

// defaultClaimTTL and defaultRetention are the lab's documented defaults
// for a zero Options.ClaimTTL and Options.Retention.
const (
	defaultClaimTTL  = time.Minute
	defaultRetention = 24 * time.Hour
)

func checkDefaults(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	// Each default on its own: a zero ClaimTTL next to an explicit
	// Retention, and the other way round.
	a := e.procWith("worker A (ClaimTTL 0)", Options{Prefix: e.prefix, Retention: e.Retention})
	b := e.procWith("worker B (Retention 0)", Options{Prefix: e.prefix, ClaimTTL: e.ClaimTTL})
	c := e.proc("worker C")
	if _, err := a.Claim("acme", "order-1", "fp:doc-42"); err != nil {
		t.Fatalf(`Claim("acme", "order-1") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	var n counter
	v, err := b.Do("acme", "order-2", "fp:doc-43", n.work(h, b.name, "signed:doc-43"))
	if err != nil || v != "signed:doc-43" {
		t.Fatalf(`Do("acme", "order-2") = %q, %v, want "signed:doc-43", nil`, v, shortErr(err))
	}
	if !e.virtual {
		// A real server cannot wait a day: read the TTLs the store set.
		for _, k := range []struct {
			what string
			want time.Duration
		}{{"the claim of a store with ClaimTTL 0", defaultClaimTTL}, {"the result of a store with Retention 0", defaultRetention}} {
			ttls := e.keys()
			found := false
			for _, ki := range ttls {
				d := time.Duration(ki.pttl) * time.Millisecond
				if d > k.want-5*time.Second && d <= k.want {
					found = true
				}
			}
			if !found {
				t.Errorf("no key carries a TTL of about %v for %s (keys: %d); zero means the default", k.want, k.what, len(ttls))
			}
		}
		return
	}
	e.advance(defaultClaimTTL - e.Margin)
	v, err = c.Do("acme", "order-1", "fp:doc-42", n.work(h, c.name, "signed by C"))
	if !errors.Is(err, errs.InProgress) {
		t.Errorf(`Do("acme", "order-1") %v after a store with ClaimTTL 0 claimed it = %q, %v, want an error wrapping %q: a zero ClaimTTL means DefaultClaimTTL (%v)`,
			defaultClaimTTL-e.Margin, v, shortErr(err), errs.InProgress, defaultClaimTTL)
	}
	e.advance(2 * e.Margin)
	v, err = c.Do("acme", "order-1", "fp:doc-42", n.work(h, c.name, "signed by C"))
	if err != nil || v != "signed by C" {
		t.Errorf(`Do("acme", "order-1") %v after a store with ClaimTTL 0 claimed it = %q, %v, want the work to run ("signed by C", nil): a zero ClaimTTL means DefaultClaimTTL (%v), not "never expires"`,
			defaultClaimTTL+e.Margin, v, shortErr(err), defaultClaimTTL)
	}
	e.advance(defaultRetention - defaultClaimTTL - 2*e.Margin)
	v, err = c.Do("acme", "order-2", "fp:doc-43", n.work(h, c.name, "signed:doc-43 (again)"))
	if err != nil || v != "signed:doc-43" {
		t.Errorf(`Do("acme", "order-2") %v after a store with Retention 0 completed it = %q, %v, want the stored "signed:doc-43", nil: a zero Retention means DefaultRetention (%v)`,
			defaultRetention-e.Margin, v, shortErr(err), defaultRetention)
	}
	e.advance(2 * e.Margin)
	v, err = c.Do("acme", "order-2", "fp:doc-43", n.work(h, c.name, "signed:doc-43 (new)"))
	if err != nil || v != "signed:doc-43 (new)" {
		t.Errorf(`Do("acme", "order-2") %v after a store with Retention 0 completed it = %q, %v, want the work to run again ("signed:doc-43 (new)", nil): a zero Retention means DefaultRetention (%v)`,
			defaultRetention+e.Margin, v, shortErr(err), defaultRetention)
	}
}

func checkResultsVerbatim(t *testing.T, h *suites.History, e *env) {
	a, b := e.proc("worker A"), e.proc("worker B")
	big := strings.Repeat("0123456789abcdef", 4<<10) // 64 KB
	items := []struct{ fingerprint, result string }{
		{"fp:doc-42", ""},
		{"fp|doc|43", "signed|doc|43|ok"},
		{"fp:doc 44 by alice", "signed: doc 44\nsecond line\r\n"},
		{`fp "quoted" {json}`, `{"status": "signed", "path": "C:\\docs\\44"}`},
		{"fp:nul\x00byte", "result\x00with a NUL"},
		{"fp:ünïcödé ✓", "signé ✓ 😀"},
		{"fp:\xff\xfe", "signed \xff\xfe (not UTF-8)"},
		{"\xff", "\ufffd"},
		{" 3 x", " pending x 3 abc"},
		{"", "done"},
		{"fp:big", big},
	}
	for i, it := range items {
		key := fmt.Sprintf("order-%d", i+1)
		var c counter
		v, err := a.store.Do(context.Background(), "acme", key, it.fingerprint, c.work(h, a.name, it.result))
		if err != nil || v != it.result {
			h.Record(a.name, fmt.Sprintf("Do(%q, %q, fingerprint %s)", "acme", key, show(it.fingerprint)), e.describe(v, err))
			t.Errorf(`Do("acme", %q) with result %s = %s, %v, want the same value and nil`, key, show(it.result), show(v), shortErr(err))
			continue
		}
		v, err = b.store.Do(context.Background(), "acme", key, it.fingerprint, c.work(h, b.name, "executed again"))
		if err != nil || v != it.result || c.n.Load() != 1 {
			h.Record(a.name, fmt.Sprintf("Do(%q, %q, fingerprint %s)", "acme", key, show(it.fingerprint)), e.describe(it.result, nil))
			h.Record(b.name, fmt.Sprintf("Do(%q, %q, fingerprint %s)", "acme", key, show(it.fingerprint)), e.describe(v, err))
			t.Errorf(`Do("acme", %q) after it completed with %s = %s, %v (work ran %d times), want the stored value byte for byte, nil, and the work run once: every result, empty or full of separators, is stored and replayed exactly`,
				key, show(it.result), show(v), shortErr(err), c.n.Load())
			continue
		}
		if it.fingerprint == "" {
			continue
		}
		other := it.fingerprint[:len(it.fingerprint)-1]
		v, err = b.store.Do(context.Background(), "acme", key, other, c.work(h, b.name, "executed again"))
		if !errors.Is(err, e.tg.errs.FingerprintMismatch) {
			h.Record(b.name, fmt.Sprintf("Do(%q, %q, fingerprint %s)", "acme", key, show(other)), e.describe(v, err))
			t.Errorf(`Do("acme", %q) with fingerprint %s after it completed with %s = %s, %v, want an error wrapping %q: fingerprints are compared exactly`,
				key, show(other), show(it.fingerprint), show(v), shortErr(err), e.tg.errs.FingerprintMismatch)
		}
	}
	// Many readers of one finished key at once all get its result.
	const readers = 5
	var c counter
	calls := make([]*suites.Call, readers)
	got := make([]string, readers)
	gotErr := make([]error, readers)
	for i := range calls {
		p := e.proc(fmt.Sprintf("reader %d", i+1))
		calls[i] = e.goCall(func() {
			got[i], gotErr[i] = p.store.Do(context.Background(), "acme", "order-2", "fp|doc|43", c.work(h, p.name, "executed again"))
		})
	}
	for i, call := range calls {
		call.Wait()
		if gotErr[i] != nil || got[i] != "signed|doc|43|ok" {
			t.Errorf(`reader %d: Do("acme", "order-2") of a completed key, %d readers at once = %q, %v, want "signed|doc|43|ok", nil`, i+1, readers, got[i], shortErr(gotErr[i]))
		}
	}
	if n := c.n.Load(); n > 0 {
		t.Errorf("%d readers of a completed key at once ran the work %d times, want 0", readers, n)
	}
}

// outliveClaim returns a work function that stalls past ClaimTTL while
// worker b claims key, then returns value and err.
func outliveClaim(t testing.TB, e *env, b *proc, key, value string, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		e.h.Note("worker A's work stalls for longer than ClaimTTL; its claim expires")
		e.advance(e.ClaimTTL + e.Margin)
		if _, cerr := b.Claim("acme", key, "fp:doc-42"); cerr != nil {
			t.Errorf(`worker B: Claim("acme", %q) after worker A's claim expired = %v, want a held claim and a nil error`, key, shortErr(cerr))
		}
		return value, err
	}
}

func checkDoReports(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b, c := e.proc("worker A"), e.proc("worker B"), e.proc("worker C")
	errWork := errors.New("provider said no")

	// Success, but the claim was lost: the value and ErrClaimLost.
	v, err := a.Do("acme", "order-1", "fp:doc-42", outliveClaim(t, e, b, "order-1", "signed by A", nil))
	if v != "signed by A" || !errors.Is(err, errs.ClaimLost) {
		t.Errorf(`worker A: Do("acme", "order-1") whose work succeeded after its claim was taken = %q, %v, want "signed by A" and an error wrapping %q: the work's value comes back with the error that kept it from being stored`, v, shortErr(err), errs.ClaimLost)
	}
	var n counter
	if v, err := c.Do("acme", "order-1", "fp:doc-42", n.work(h, c.name, "signed by C")); !errors.Is(err, errs.InProgress) {
		t.Errorf(`worker C: Do("acme", "order-1") while worker B holds it = %q, %v, want an error wrapping %q: worker A's late success must not touch B's claim`, v, shortErr(err), errs.InProgress)
	}

	// Failure, and the release failed too: both errors.
	_, err = a.Do("acme", "order-2", "fp:doc-42", outliveClaim(t, e, b, "order-2", "", errWork))
	if !errors.Is(err, errWork) || !errors.Is(err, errs.ClaimLost) {
		t.Errorf(`worker A: Do("acme", "order-2") whose work failed after its claim was taken = %v, want an error wrapping both the work's error %q and %q: the release failed too, and the caller must hear it`, shortErr(err), errWork, errs.ClaimLost)
	}
	if v, err := c.Do("acme", "order-2", "fp:doc-42", n.work(h, c.name, "signed by C")); !errors.Is(err, errs.InProgress) {
		t.Errorf(`worker C: Do("acme", "order-2") while worker B holds it = %q, %v, want an error wrapping %q: worker A's release must not free B's claim`, v, shortErr(err), errs.InProgress)
	}

	// Failure, and Redis failed the release: both errors.
	_, err = a.Do("acme", "order-3", "fp:doc-42", func(context.Context) (string, error) {
		n.executed(h, a.name)
		h.Note("Redis will fail worker A's next command")
		a.failNext(1)
		return "", errWork
	})
	if !errors.Is(err, errWork) || !errors.Is(err, errInjected) {
		t.Errorf(`worker A: Do("acme", "order-3") whose work failed and whose release Redis failed = %v, want an error wrapping both the work's error %q and the Redis error %q`, shortErr(err), errWork, errInjected)
	}

	// Success, and Redis failed the completion: the value and the error.
	v, err = a.Do("acme", "order-4", "fp:doc-42", func(context.Context) (string, error) {
		n.executed(h, a.name)
		h.Note("Redis will fail worker A's next command")
		a.failNext(1)
		return "signed:doc-44", nil
	})
	if v != "signed:doc-44" || !errors.Is(err, errInjected) {
		t.Errorf(`worker A: Do("acme", "order-4") whose work succeeded and whose completion Redis failed = %q, %v, want "signed:doc-44" and an error wrapping %q`, v, shortErr(err), errInjected)
	}
	a.failAt.Store(0)
}

func checkExpiredClaimIsLost(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b := e.proc("worker A"), e.proc("worker B")
	// Both orders: Complete then Release, and Release then Complete.
	for i, order := range [][2]string{{"Complete", "Release"}, {"Release", "Complete"}} {
		key := fmt.Sprintf("order-%d", i+1)
		before := map[string]bool{}
		for _, k := range e.keys() {
			before[k.name] = true
		}
		claim, err := a.Claim("acme", key, "fp:doc-42")
		if err != nil {
			t.Fatalf(`Claim("acme", %q) on a new key = %v, want a held claim and a nil error`, key, shortErr(err))
		}
		var written []string // the claim's Redis keys
		for _, k := range e.keys() {
			if !before[k.name] {
				written = append(written, k.name)
			}
		}
		stall := e.ClaimTTL + e.Margin
		if e.virtual && i == 1 {
			stall = 3 * 24 * time.Hour // far past the end
		}
		h.Note("worker A stalls for %v; its claim expires and nobody claims the key", stall)
		e.advance(stall)
		for _, op := range order {
			if op == "Complete" {
				err = a.Complete(claim, "signed by A")
			} else {
				err = a.Release(claim)
			}
			if !errors.Is(err, errs.ClaimLost) {
				t.Errorf(`worker A: %s(its claim on %q) after it expired, with nobody else holding the key = %v, want an error wrapping %q: the claim is no longer A's`, op, key, shortErr(err), errs.ClaimLost)
			}
		}
		for _, k := range e.keys() {
			if slices.Contains(written, k.name) {
				t.Errorf(`after worker A's expired claim on %q was completed and released, Redis holds its key %s again, want nothing: a lost claim changes nothing, and must not write a record back`, key, show(e.short(k.name)))
			}
		}
		var n counter
		v, err := b.Do("acme", key, "fp:doc-42", n.work(h, b.name, "signed by B"))
		if err != nil || v != "signed by B" {
			t.Errorf(`worker B: Do("acme", %q) after worker A's claim expired = %q, %v, want the work to run ("signed by B", nil)`, key, v, shortErr(err))
		}
	}
}

func checkSettledStaysSettled(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b := e.proc("worker A"), e.proc("worker B")
	lost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errs.ClaimLost) {
			t.Errorf(`worker A: %s = %v, want an error wrapping %q: the claim was already settled`, what, shortErr(err), errs.ClaimLost)
		}
	}

	// Completed, then released and completed again.
	c1, err := a.Claim("acme", "order-1", "fp:doc-42")
	if err != nil {
		t.Fatalf(`Claim("acme", "order-1") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	if err := a.Complete(c1, "signed:doc-42"); err != nil {
		t.Fatalf(`Complete(its claim, "signed:doc-42") = %v, want nil`, shortErr(err))
	}
	h.Note("a deferred cleanup (or a redelivered message) settles the same claim again")
	lost(`Release(its claim) after Complete`, a.Release(c1))
	lost(`Complete(its claim, "signed twice") after Complete`, a.Complete(c1, "signed twice"))
	var n counter
	v, err := b.Do("acme", "order-1", "fp:doc-42", n.work(h, b.name, "signed by B"))
	if err != nil || v != "signed:doc-42" {
		t.Errorf(`worker B: Do("acme", "order-1") after its claim was completed, then released and completed again = %q, %v, want the first stored "signed:doc-42", nil: a completed result stays for Retention`, v, shortErr(err))
	}

	// Released, then completed and released again.
	c2, err := a.Claim("acme", "order-2", "fp:doc-42")
	if err != nil {
		t.Fatalf(`Claim("acme", "order-2") on a new key = %v, want a held claim and a nil error`, shortErr(err))
	}
	if err := a.Release(c2); err != nil {
		t.Fatalf(`Release(its claim) = %v, want nil`, shortErr(err))
	}
	lost(`Complete(its claim, "signed late") after Release`, a.Complete(c2, "signed late"))
	lost(`Release(its claim) after Release`, a.Release(c2))
	v, err = b.Do("acme", "order-2", "fp:doc-42", n.work(h, b.name, "signed by B"))
	if err != nil || v != "signed by B" {
		t.Errorf(`worker B: Do("acme", "order-2") after its claim was released, then completed and released again = %q, %v, want the work to run ("signed by B", nil)`, v, shortErr(err))
	}

	// The same claim settled twice at once: exactly one settlement wins.
	for i, ops := range [][2]string{{"Complete", "Complete"}, {"Complete", "Release"}, {"Release", "Release"}} {
		key := fmt.Sprintf("order-%d", i+3)
		c, err := a.Claim("acme", key, "fp:doc-42")
		if err != nil {
			t.Fatalf(`Claim("acme", %q) on a new key = %v, want a held claim and a nil error`, key, shortErr(err))
		}
		var errsGot [2]error
		var calls [2]*suites.Call
		for j, op := range ops {
			p := e.proc(fmt.Sprintf("worker A (copy %d)", j+1))
			result := fmt.Sprintf("signed by copy %d", j+1)
			calls[j] = e.goCall(func() {
				if op == "Complete" {
					errsGot[j] = p.store.Complete(context.Background(), c, result)
				} else {
					errsGot[j] = p.store.Release(context.Background(), c)
				}
			})
		}
		calls[0].Wait()
		calls[1].Wait()
		winner := -1
		for j, err := range errsGot {
			switch {
			case err == nil && winner < 0:
				winner = j
			case err == nil:
				t.Errorf(`%s and %s of one claim on %q at once both returned nil, want exactly one to settle it and the other to get an error wrapping %q`, ops[0], ops[1], key, errs.ClaimLost)
			case !errors.Is(err, errs.ClaimLost):
				t.Errorf(`%s of a claim on %q settled at the same moment by another call = %v, want nil or an error wrapping %q`, ops[j], key, shortErr(err), errs.ClaimLost)
			}
		}
		if winner < 0 {
			t.Errorf(`%s and %s of one held claim on %q at once both failed (%v; %v), want exactly one to settle it`, ops[0], ops[1], key, shortErr(errsGot[0]), shortErr(errsGot[1]))
			continue
		}
		want := fmt.Sprintf("signed by copy %d", winner+1)
		if ops[winner] == "Release" {
			want = "signed by B"
		}
		v, err := b.Do("acme", key, "fp:doc-42", n.work(h, b.name, "signed by B"))
		if err != nil || v != want {
			t.Errorf(`worker B: Do("acme", %q) after %s won over %s = %q, %v, want %q, nil`, key, ops[winner], ops[1-winner], v, shortErr(err), want)
		}
	}
}

// sentinel names the lab's sentinel err matches, or "".
func (e *env) sentinel(err error) string {
	errs := e.tg.errs
	for _, s := range []error{errs.InProgress, errs.FingerprintMismatch, errs.InvalidKey, errs.ClaimLost} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ""
}

func checkRedisErrors(t *testing.T, h *suites.History, e *env) {
	errs := e.tg.errs
	a, b := e.proc("worker A"), e.proc("worker B")
	ctx := context.Background()
	var n counter
	// reported checks an operation that Redis failed: its error wraps the
	// Redis error and none of the lab's sentinels.
	reported := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errInjected) {
			t.Errorf(`%s, with Redis failing its command %s = %v, want an error wrapping the Redis error %q`, what, b.cmd(b.failAt.Load()), shortErr(err), errInjected)
		} else if s := e.sentinel(err); s != "" {
			t.Errorf(`%s, with Redis failing a command = %v, want the Redis error, not one that also says %q: a failure is not an answer`, what, shortErr(err), s)
		}
	}
	key := 0
	fresh := func() string { key++; return fmt.Sprintf("order-%d", key) }
	// Each scenario runs once per command the operation sends, with Redis
	// failing that command, until the operation sends fewer.
	scenario := func(name string, setup func(k string) any, op func(k string, held any) (done bool)) {
		for cmd := int64(1); cmd <= 6; cmd++ {
			k := fresh()
			held := setup(k)
			h.Note("%s on %q; Redis fails worker B's command %d of it", name, k, cmd)
			b.failNext(cmd)
			done := op(k, held)
			b.failAt.Store(0)
			if done || !b.failed.Load() || t.Failed() {
				return
			}
		}
	}
	scenario("Claim of a free key", func(string) any { return nil }, func(k string, _ any) bool {
		_, err := b.store.Claim(ctx, "acme", k, "fp:doc-42")
		if b.failed.Load() && err != nil {
			reported(fmt.Sprintf(`Claim("acme", %q)`, k), err)
		}
		return false
	})
	claimA := func(k string) any {
		c, err := a.Claim("acme", k, "fp:doc-42")
		if err != nil {
			t.Fatalf(`worker A: Claim("acme", %q) on a new key = %v, want a held claim and a nil error`, k, shortErr(err))
		}
		return c
	}
	scenario("Claim of a key worker A holds", claimA, func(k string, _ any) bool {
		_, err := b.store.Claim(ctx, "acme", k, "fp:doc-42")
		if b.failed.Load() {
			reported(fmt.Sprintf(`worker B: Claim("acme", %q) while worker A holds it`, k), err)
		} else if !errors.Is(err, errs.InProgress) {
			t.Errorf(`worker B: Claim("acme", %q) while worker A holds it = %v, want an error wrapping %q`, k, shortErr(err), errs.InProgress)
		}
		return false
	})
	scenario("Do of a completed key", func(k string) any {
		if v, err := a.Do("acme", k, "fp:doc-42", n.work(h, a.name, "signed")); err != nil {
			t.Fatalf(`worker A: Do("acme", %q) = %q, %v, want "signed", nil`, k, v, shortErr(err))
		}
		return nil
	}, func(k string, _ any) bool {
		var again counter
		v, err := b.store.Do(ctx, "acme", k, "fp:doc-42", again.work(h, b.name, "signed again"))
		if again.n.Load() > 0 {
			t.Errorf(`worker B: Do("acme", %q) of a completed key, with Redis failing a command, ran the work: without the record's answer nothing may run`, k)
		}
		if b.failed.Load() && (err != nil || v != "signed") {
			reported(fmt.Sprintf(`worker B: Do("acme", %q) of a completed key`, k), err)
		}
		return false
	})
	scenario("Complete", claimA, func(k string, held any) bool {
		err := b.store.Complete(ctx, held, "signed by A")
		if b.failed.Load() && err != nil {
			reported(fmt.Sprintf(`Complete(the claim on %q)`, k), err)
		}
		return false
	})
	scenario("Release", claimA, func(k string, held any) bool {
		err := b.store.Release(ctx, held)
		if b.failed.Load() && err != nil {
			reported(fmt.Sprintf(`Release(the claim on %q)`, k), err)
		}
		return false
	})
	scenario("Do of a free key", func(string) any { return nil }, func(k string, _ any) bool {
		var w counter
		v, err := b.store.Do(ctx, "acme", k, "fp:doc-42", w.work(h, b.name, "signed by B"))
		if !b.failed.Load() {
			return false
		}
		if w.n.Load() > 0 && v != "signed by B" {
			t.Errorf(`worker B: Do("acme", %q) whose work ran, with Redis failing a command = %q, %v, want the work's value "signed by B" with the error`, k, v, shortErr(err))
		}
		if err != nil || w.n.Load() == 0 {
			reported(fmt.Sprintf(`worker B: Do("acme", %q)`, k), err)
		}
		return false
	})

	// A caller whose context is already cancelled gets its error, and
	// nothing runs.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	k := fresh()
	var none counter
	v, err := b.store.Do(cancelled, "acme", k, "fp:doc-42", none.work(h, b.name, "signed"))
	h.Record(b.name, fmt.Sprintf(`Do("acme", %q) with a cancelled context`, k), e.describe(v, err))
	if none.n.Load() > 0 {
		t.Errorf(`Do("acme", %q) with a cancelled context ran the work, want it not to run`, k)
	}
	if !errors.Is(err, context.Canceled) || e.sentinel(err) != "" {
		t.Errorf(`Do("acme", %q) with a cancelled context = %q, %v, want an error wrapping %q (and none of the lab's sentinels)`, k, v, shortErr(err), context.Canceled)
	}
}
