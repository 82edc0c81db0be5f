package redissuite

import (
	"context"
	"errors"
	"fmt"
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
	v, err = b.Do("acme", "order-1", "fp:doc-42", c.work(h, "worker B", "signed:doc-42 (new)"))
	if err != nil || v != "signed:doc-42 (new)" {
		t.Errorf(`Do("acme", "order-1") %v after it completed = %q, %v, want the work to run again ("signed:doc-42 (new)", nil): the retention window of %v has passed, so the record must have expired`,
			e.Retention+e.Margin, v, shortErr(err), e.Retention)
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
	p := e.proc("worker A")
	ctx := context.Background()
	failures := 0
	for _, pr := range pairs {
		one, two := pr[0], pr[1]
		var c1, c2 counter
		v1, err1 := p.store.Do(ctx, one.tenant, one.key, "fp:doc", c1.work(nil, "", "first"))
		label1 := fmt.Sprintf("Do(%s, %s)", show(one.tenant), show(one.key))
		if err1 != nil || v1 != "first" {
			h.Record(p.name, label1, e.describe(v1, err1))
			t.Errorf(`%s = %q, %v, want "first", nil: a tenant and a key may contain any character but NUL`, label1, v1, shortErr(err1))
			failures++
		} else {
			v2, err2 := p.store.Do(ctx, two.tenant, two.key, "fp:doc", c2.work(nil, "", "second"))
			if c2.n.Load() != 1 || err2 != nil || v2 != "second" {
				label2 := fmt.Sprintf("Do(%s, %s)", show(two.tenant), show(two.key))
				h.Record(p.name, label1, e.describe(v1, err1))
				h.Record(p.name, label2, e.describe(v2, err2))
				t.Errorf(`%s after %s = %q, %v, want "second", nil: (%s, %s) and (%s, %s) are different requests, but they were stored under one Redis key`,
					label2, label1, v2, shortErr(err2), show(two.tenant), show(two.key), show(one.tenant), show(one.key))
				failures++
			}
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
