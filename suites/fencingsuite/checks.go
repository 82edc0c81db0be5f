package fencingsuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

const resource = "report.txt"

func checkGrant(t *testing.T, h *suites.History, tg target) {
	for _, c := range []struct {
		ttl, want time.Duration
		name      string
	}{
		{10 * time.Second, 10 * time.Second, "TTL 10s"},
		{0, task.DefaultLockTTL, "TTL left zero (the default)"},
		{time.Nanosecond, time.Nanosecond, "TTL 1ns"},
	} {
		l := tg.locks(t, h, c.ttl)
		// The lock service was built a while ago: a grant lasts TTL from
		// the Acquire that makes it, not from the service's start.
		h.Note("5s later, with %s", c.name)
		fakeclock.Advance(5 * time.Second)
		now := time.Now()
		g, err := l.acquire("worker A", resource)
		switch {
		case err != nil:
			t.Errorf("with %s: Acquire(%q) = %s, want a grant", c.name, resource, grantString(g, err))
			continue
		case g.Resource != resource || g.Holder != "worker A" || !g.Expires.Equal(now.Add(c.want)):
			t.Errorf("with %s: Acquire(%q) at %s = %s, want Grant{%q, %q, token > 0, expires %s}, nil",
				c.name, resource, at(now), grantString(g, err), resource, "worker A", at(now.Add(c.want)))
		case g.Token == 0:
			t.Errorf("with %s: Acquire(%q) = %s, want a token other than 0 (0 is the token of a writer that was never granted one)", c.name, resource, grantString(g, err))
		}
	}
	l, err := tg.build(-time.Second)
	h.Record("test", "NewLocks(LockOptions{TTL: -1s})", describeErr(err, "a lock service"))
	if !errors.Is(err, task.ErrInvalidTTL) {
		t.Errorf("NewLocks(LockOptions{TTL: -1s}) = %v, %v, want nil, %s", l, err, wrapping(task.ErrInvalidTTL))
	}
}

func checkHeld(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	a, err := l.acquire("worker A", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", resource, grantString(a, err))
	}
	refused := func(when, actor string) {
		t.Helper()
		var g task.Grant
		var err error
		call := suites.Go(func() { g, err = l.acquire(actor, resource) })
		if !call.Settle() {
			h.Note("%s's Acquire(%q) is still waiting", actor, resource)
			t.Fatalf("%s: Acquire(%q) by %s waited for the resource to become free, want an immediate error wrapping %q", when, resource, actor, task.ErrLockHeld)
		}
		if !errors.Is(err, task.ErrLockHeld) {
			t.Errorf("%s: Acquire(%q) by %s = %s, want %s (worker A's grant, token %d, holds until %s)",
				when, resource, actor, grantString(g, err), wrapping(task.ErrLockHeld), a.Token, at(a.Expires))
		}
	}
	refused("at once", "worker B")
	refused("at once", "worker A")
	for _, other := range []string{"report.txt ", "REPORT.TXT", "", "invoice.txt"} {
		if g, err := l.acquire("worker B", other); err != nil {
			t.Errorf("Acquire(%q) while only %q is held = %s, want a grant: other resources are not affected", other, resource, grantString(g, err))
		}
	}
	h.Note("until a nanosecond before worker A's grant expires")
	fakeclock.Advance(10*time.Second - time.Nanosecond)
	refused("10s minus 1ns after the grant", "worker B")
	refused("10s minus 1ns after the grant", "worker A")
}

func checkExpiry(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	a, err := l.acquire("worker A", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", resource, grantString(a, err))
	}
	h.Note("worker A crashes; nobody releases its grant")
	fakeclock.Advance(10 * time.Second)
	b, err := l.acquire("worker B", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) at %s, exactly when worker A's grant expires = %s, want a grant: a lease ends by itself at its expiry",
			resource, at(a.Expires), grantString(b, err))
	}
	h.Note("worker B crashes too; three days pass")
	fakeclock.Advance(72 * time.Hour)
	if c, err := l.acquire("worker C", resource); err != nil {
		t.Errorf("Acquire(%q) three days after the last grant expired = %s, want a grant", resource, grantString(c, err))
	}
}

// checkTokensIncrease grants one resource forty times, in every way a
// grant can follow another, and checks each token against the largest so
// far. A second resource is granted in between: its tokens must increase
// too, and whether the two share one counter is the implementation's
// choice.
func checkTokensIncrease(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	last := map[string]task.FencingToken{}
	grant := func(how, actor, res string) task.Grant {
		t.Helper()
		g, err := l.acquire(actor, res)
		if err != nil {
			t.Fatalf("Acquire(%q) %s = %s, want a grant", res, how, grantString(g, err))
		}
		prev, seen := last[res]
		switch {
		case g.Token == 0:
			t.Fatalf("Acquire(%q) %s = token 0, want a token other than 0", res, how)
		case seen && g.Token <= prev:
			t.Fatalf("Acquire(%q) %s = token %d, want a token larger than %d, the token of the grant before it: a worker holding %d would look as new as the current holder",
				res, how, g.Token, prev, prev)
		}
		last[res] = g.Token
		return g
	}
	g := grant("of a free resource", "worker A", resource)
	grant("of another free resource", "worker X", "invoice.txt")
	fakeclock.Advance(10 * time.Second)
	g = grant("after worker A's grant expired", "worker B", resource)
	if err := l.release("worker B", g); err != nil {
		t.Fatalf("Release of worker B's current grant = %v, want nil", err)
	}
	g = grant("right after worker B released it", "worker C", resource)
	fakeclock.Advance(72 * time.Hour)
	grant("three days after the last grant expired", "worker D", resource)
	fakeclock.Advance(10 * time.Second)
	grant("after the other resource's grant expired", "worker X", "invoice.txt")
	// The same worker, again and again, in both ways a lock is handed on.
	h.Note("worker E takes the lock 34 more times, letting it expire or releasing it in turn")
	quiet := lockService{LockService: l.LockService}
	for i := range 34 {
		fakeclock.Advance(10 * time.Second)
		got, err := quiet.acquire("worker E", resource)
		if err != nil {
			t.Fatalf("Acquire(%q) #%d by worker E, after the previous grant ended = %s, want a grant", resource, i+1, grantString(got, err))
		}
		if got.Token <= last[resource] {
			l.h.Record("worker E", fmt.Sprintf("Acquire(%q)", resource), describeGrant(got, err))
			t.Fatalf("Acquire(%q) #%d by worker E = token %d, want a token larger than %d, the token of the grant before it", resource, i+1, got.Token, last[resource])
		}
		last[resource] = got.Token
		if i%2 == 0 {
			if err := quiet.release("worker E", got); err != nil {
				t.Fatalf("Release of worker E's current grant (token %d) = %v, want nil", got.Token, err)
			}
		}
	}
	h.Record("worker E", fmt.Sprintf("Acquire(%q) x34", resource), fmt.Sprintf("tokens increased every time, up to %d", last[resource]))
}

// checkConcurrentGrants races Acquires of one resource, each winner
// releasing at once. Graded by labctl, the lock service's "sync" import
// points at suites/syncpoint, and the suite chooses from the case's seed
// which worker runs at every Lock and Unlock: a check and a grant split
// over two lock sections is exposed on every run and replays from the
// seed. Then the workers race on the real scheduler, for the race detector,
// which sees unsynchronised state whether or not the calls happened to
// interleave. A lock service that is not scheduled (channels, atomics, or
// plain go test) is judged by the real races and the race detector alone;
// without either, the case cannot judge, and says so.
func checkConcurrentGrants(t *testing.T, h *suites.History, tg target) {
	if procs := runtime.GOMAXPROCS(0); procs < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(procs)
	}
	l := tg.locks(t, h, time.Minute)
	seed := suites.Seed(t)
	scheduled := 0
	for round := range scheduledRounds {
		resource := fmt.Sprintf("scheduled-%d", round)
		problem, res := scheduledGrantRound(seed+int64(round), l.LockService, resource)
		if !res.Controlled {
			break // no instrumented locks, or code the schedule cannot drive
		}
		scheduled++
		if problem != "" {
			h.Note("round %d (seed %d): %d workers race for %q, their lock operations interleaved by the suite:", round+1, seed+int64(round), raceWorkers, resource)
			for _, line := range res.Trace {
				h.Note("  %s", line)
			}
			t.Fatalf("round %d, under a schedule of the lock service's lock operations: %s", round+1, problem)
		}
	}
	h.Note("%d rounds under a seeded schedule; now %d rounds of %d workers released together on the real scheduler", scheduled, freeRounds, raceWorkers)
	for round := range freeRounds {
		if problem := freeGrantRound(l.LockService, fmt.Sprintf("free-%d", round)); problem != "" {
			h.Note("round %d went wrong", round+1)
			t.Fatalf("round %d: %s", round+1, problem)
		}
	}
	if scheduled < scheduledRounds && !raceDetector() {
		suites.Inconclusive(t, "the lock service's locks could not be scheduled and the race detector is off, so this case cannot tell synchronised grants from lucky ones (install a C compiler so that -race works)")
	}
}

func checkRelease(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	a, err := l.acquire("worker A", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", resource, grantString(a, err))
	}
	if err := l.release("worker A", a); err != nil {
		t.Fatalf("Release of worker A's current grant (token %d) = %v, want nil", a.Token, err)
	}
	b, err := l.acquire("worker B", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) right after worker A released it = %s, want a grant: a release frees the resource at once", resource, grantString(b, err))
	}
	lost := func(what string, g task.Grant, holder task.Grant) {
		t.Helper()
		err := l.release(g.Holder, g)
		if !errors.Is(err, task.ErrLockLost) {
			t.Errorf("Release of %s (token %d) = %v, want %s", what, g.Token, err, wrapping(task.ErrLockLost))
		}
		if holder.Token == 0 {
			return
		}
		if g, err := l.acquire("worker Z", holder.Resource); !errors.Is(err, task.ErrLockHeld) {
			t.Errorf("Acquire(%q) after that release = %s, want %s: %s's grant (token %d) must still hold", holder.Resource, grantString(g, err), wrapping(task.ErrLockHeld), holder.Holder, holder.Token)
		}
	}
	lost("worker A's grant, released already, while worker B holds the resource", a, b)

	// A worker restarts under the same name: its old grant is not its new one.
	const other = "invoice.txt"
	w1, err := l.acquire("worker 1", other)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", other, grantString(w1, err))
	}
	h.Note("worker 1 stalls; its grant expires; nobody has taken %q since", other)
	fakeclock.Advance(10 * time.Second)
	lost("worker 1's expired grant", w1, task.Grant{})
	h.Note("worker 1 restarts and takes %q again, under the same name", other)
	w1again, err := l.acquire("worker 1", other)
	if err != nil {
		t.Fatalf("Acquire(%q) after the grant before expired = %s, want a grant", other, grantString(w1again, err))
	}
	lost("worker 1's old, expired grant, while worker 1 holds a newer one", w1, w1again)
	if err := l.release("worker 1", w1again); err != nil {
		t.Errorf("Release of worker 1's current grant (token %d) = %v, want nil", w1again.Token, err)
	}
	lost("a grant released already", w1again, task.Grant{})
	lost("a grant of a resource never locked", task.Grant{Resource: "never-locked", Holder: "worker Y", Token: b.Token, Expires: b.Expires}, task.Grant{})
}

func checkAccepted(t *testing.T, h *suites.History, tg target) {
	s := tg.store(t, h)
	expect := func(key string, want task.FencedValue) {
		t.Helper()
		v, ok, err := s.read(key)
		if err != nil || !ok || v != want {
			t.Errorf("Read(%q) = %v, %v, %v, want %v, true, nil", key, v, ok, err, want)
		}
	}
	if v, ok, err := s.read(resource); err != nil || ok {
		t.Errorf("Read(%q) of a key never written = %v, %v, %v, want a zero FencedValue, false, nil", resource, v, ok, err)
	}
	accepted := func(actor string, token task.FencingToken, key, value, why string) {
		t.Helper()
		if err := s.write(actor, token, key, value); err != nil {
			t.Errorf("%s = %v, want nil (%s)", writeCall(token, key, value), err, why)
		}
		expect(key, task.FencedValue{Value: value, Token: token})
	}
	accepted("worker A", 33, resource, "A's draft", "the first write to a key")
	accepted("worker A", 33, resource, "A's final", "the holder of token 33 writes again")
	accepted("worker B", 34, resource, "B's report", "a higher token")
	accepted("worker B", 34, resource, "", "an empty value is a value")
	accepted("worker 1", 1, "notes.txt", "first", "1 is the first token a lock service can grant")
	accepted("worker 1", 1, "notes.txt", "second", "the holder of token 1 writes again")
	accepted("worker M", math.MaxUint64, "max.txt", "top", "2^64-1 is a token like any other")
	accepted("worker M", math.MaxUint64, "max.txt", "top again", "the holder of token 2^64-1 writes again")
}

func checkRefused(t *testing.T, h *suites.History, tg target) {
	s := tg.store(t, h)
	if err := s.write("worker B", 34, resource, "B's report"); err != nil {
		t.Fatalf("%s to a key never written = %v, want nil", writeCall(34, resource, "B's report"), err)
	}
	want := task.FencedValue{Value: "B's report", Token: 34}
	for _, c := range []struct {
		actor string
		token task.FencingToken
	}{{"worker A", 33}, {"worker A", 1}, {"worker ?", 0}} {
		value := fmt.Sprintf("late write with %d", c.token)
		err := s.write(c.actor, c.token, resource, value)
		if !errors.Is(err, task.ErrStaleToken) {
			t.Errorf("%s after token 34 was accepted = %v, want %s", writeCall(c.token, resource, value), err, wrapping(task.ErrStaleToken))
		}
		if v, ok, err := s.read(resource); err != nil || !ok || v != want {
			t.Errorf("Read(%q) after the refused write with %d = %v, %v, %v, want %v, true, nil: a refused write changes nothing", resource, c.token, v, ok, err, want)
		}
	}
	if err := s.write("worker ?", 0, "fresh.txt", "no lock"); !errors.Is(err, task.ErrStaleToken) {
		t.Errorf("%s to a key never written = %v, want %s: 0 is the token of a writer that holds no lock", writeCall(0, "fresh.txt", "no lock"), err, wrapping(task.ErrStaleToken))
	}
	if v, ok, err := s.read("fresh.txt"); err != nil || ok {
		t.Errorf("Read(%q) after a refused write with token 0 = %v, %v, %v, want a zero FencedValue, false, nil", "fresh.txt", v, ok, err)
	}
	if err := s.write("worker M", math.MaxUint64, "max.txt", "top"); err != nil {
		t.Errorf("%s = %v, want nil", writeCall(math.MaxUint64, "max.txt", "top"), err)
	}
	if err := s.write("worker L", math.MaxUint64-1, "max.txt", "below the top"); !errors.Is(err, task.ErrStaleToken) {
		t.Errorf("%s after token 2^64-1 was accepted = %v, want %s", writeCall(math.MaxUint64-1, "max.txt", "below the top"), err, wrapping(task.ErrStaleToken))
	}
	// The refusals moved no fence: the holder of 34 and a newer one still write.
	for _, tok := range []task.FencingToken{34, 35} {
		value := fmt.Sprintf("written with %d", tok)
		if err := s.write("worker B", tok, resource, value); err != nil {
			t.Errorf("%s after the refusals = %v, want nil: a refused write must not move the key's highest token", writeCall(tok, resource, value), err)
		}
	}
}

func checkSkippedToken(t *testing.T, h *suites.History, tg target) {
	// The store alone, with tokens the suite chooses: 34 is never written.
	s := tg.store(t, h)
	for _, tok := range []task.FencingToken{33, 35, 1000} {
		value := fmt.Sprintf("written with %d", tok)
		if err := s.write(fmt.Sprintf("holder of %d", tok), tok, resource, value); err != nil {
			t.Errorf("%s (the highest token so far, with earlier numbers skipped) = %v, want nil", writeCall(tok, resource, value), err)
		}
	}

	// End to end: B is granted the lock and crashes before it writes.
	h.Note("a new lock service and store; B will crash before writing")
	l := tg.locks(t, h, 10*time.Second)
	s = tg.store(t, h)
	const key = "invoice.txt"
	a, err := l.acquire("worker A", key)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", key, grantString(a, err))
	}
	if err := s.write("worker A", a.Token, key, "A's invoice"); err != nil {
		t.Fatalf("%s with worker A's current token = %v, want nil", writeCall(a.Token, key, "A's invoice"), err)
	}
	if err := l.release("worker A", a); err != nil {
		t.Fatalf("Release of worker A's current grant = %v, want nil", err)
	}
	b, err := l.acquire("worker B", key)
	if err != nil {
		t.Fatalf("Acquire(%q) right after a release = %s, want a grant", key, grantString(b, err))
	}
	h.Note("worker B crashes before writing: the store never sees token %d", b.Token)
	fakeclock.Advance(10 * time.Second)
	c, err := l.acquire("worker C", key)
	if err != nil {
		t.Fatalf("Acquire(%q) after worker B's grant expired = %s, want a grant", key, grantString(c, err))
	}
	if err := s.write("worker C", c.Token, key, "C's invoice"); err != nil {
		t.Errorf("%s by the current holder, after worker B's token %d was skipped = %v, want nil: the store has accepted only %d, and %d is higher",
			writeCall(c.Token, key, "C's invoice"), b.Token, err, a.Token, c.Token)
	}
}

// checkZombie plays the scenario of Kleppmann's "How to do distributed
// locking", with the tokens of its figure: 32 grants come first, so that a
// lock service counting from 1 gives worker A token 33.
func checkZombie(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	s := tg.store(t, h)
	quiet := lockService{LockService: l.LockService}
	for i := range 32 {
		g, err := quiet.acquire("an earlier worker", resource)
		if err == nil {
			err = quiet.release("an earlier worker", g)
		}
		if err != nil {
			t.Fatalf("earlier grant #%d of %q: %v, want it granted and released", i+1, resource, err)
		}
	}
	h.Note("%q has been granted and released 32 times; the case starts", resource)
	h.Restart()

	a, err := l.acquire("worker A", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) of a free resource = %s, want a grant", resource, grantString(a, err))
	}
	fakeclock.Advance(time.Second)
	if err := s.write("worker A", a.Token, resource, "balance 100 (A)"); err != nil {
		t.Fatalf("%s by the current holder = %v, want nil", writeCall(a.Token, resource, "balance 100 (A)"), err)
	}
	h.Note("worker A stops for a 30s garbage-collection pause; its lease ends at %s and it does not know", at(a.Expires))
	fakeclock.Advance(11 * time.Second)
	b, err := l.acquire("worker B", resource)
	if err != nil {
		t.Fatalf("Acquire(%q) after worker A's grant expired = %s, want a grant", resource, grantString(b, err))
	}
	if b.Token <= a.Token {
		t.Errorf("worker B's grant, after worker A's expired, has token %d, want more than worker A's %d: the store cannot tell the zombie from the holder", b.Token, a.Token)
	}
	fakeclock.Advance(time.Second)
	if err := s.write("worker B", b.Token, resource, "balance 80 (B)"); err != nil {
		t.Fatalf("%s by the current holder = %v, want nil", writeCall(b.Token, resource, "balance 80 (B)"), err)
	}
	fakeclock.Advance(18 * time.Second)
	h.Note("worker A wakes up, 30s later, and finishes what it was doing")
	err = s.write("worker A", a.Token, resource, "balance 100 (A, stale)")
	if !errors.Is(err, task.ErrStaleToken) {
		t.Errorf("the zombie's %s after worker B wrote with token %d = %v, want %s", writeCall(a.Token, resource, "balance 100 (A, stale)"), b.Token, err, wrapping(task.ErrStaleToken))
	}
	want := task.FencedValue{Value: "balance 80 (B)", Token: b.Token}
	if v, ok, err := s.read(resource); err != nil || !ok || v != want {
		t.Errorf("Read(%q) after the zombie's write = %v, %v, %v, want worker B's %v, true, nil", resource, v, ok, err, want)
	}
	if err := l.release("worker A", a); !errors.Is(err, task.ErrLockLost) {
		t.Errorf("the zombie's Release (token %d) = %v, want %s", a.Token, err, wrapping(task.ErrLockLost))
	}
	if err := s.write("worker B", b.Token, resource, "balance 75 (B)"); err != nil {
		t.Errorf("%s by the current holder, after the zombie was refused = %v, want nil", writeCall(b.Token, resource, "balance 75 (B)"), err)
	}
}

// checkAtomicWrite holds one Write inside the KV, between its check and
// its write, and sends a second Write with another token meanwhile, in both
// orders. Whatever the store does with the second one (wait, refuse,
// accept), the key must end with the higher token's value.
func checkAtomicWrite(t *testing.T, h *suites.History, tg target) {
	for _, c := range []struct {
		held, other       string
		heldTok, otherTok task.FencingToken
	}{
		{"worker A", "worker B", 33, 34}, // the lower write is held: the higher must not land first and be undone
		{"worker B", "worker A", 34, 33}, // the higher write is held: the lower must not slip under it
	} {
		h.Note("a new store; %s's Put of token %d will be held inside the KV", c.held, c.heldTok)
		s := tg.store(t, h)
		s.kv.trace = true
		arrived, release := s.kv.holdPut(resource, c.heldTok)
		heldValue, otherValue := fmt.Sprintf("%s's report", c.held), fmt.Sprintf("%s's report", c.other)
		var heldErr, otherErr error
		first := suites.Go(func() { heldErr = s.write(c.held, c.heldTok, resource, heldValue) })
		select {
		case <-arrived:
		case <-first.Done():
			release()
			t.Fatalf("%s on a key never written = %v without calling the KV's Put(%q, token %d), want it stored", writeCall(c.heldTok, resource, heldValue), heldErr, resource, c.heldTok)
		}
		h.Note("%s's write has passed its check and is held before it lands", c.held)
		second := suites.Go(func() { otherErr = s.write(c.other, c.otherTok, resource, otherValue) })
		answered := second.Settle()
		if !answered {
			h.Note("%s's Write waits for %s's to finish", c.other, c.held)
		}
		release()
		first.Wait()
		second.Wait()
		high, highValue, highErr := c.heldTok, heldValue, heldErr
		if c.otherTok > high {
			high, highValue, highErr = c.otherTok, otherValue, otherErr
		}
		if highErr != nil {
			t.Errorf("%s, the highest token of the two, = %v, want nil", writeCall(high, resource, highValue), highErr)
		}
		want := task.FencedValue{Value: highValue, Token: high}
		if v, ok, err := s.read(resource); err != nil || !ok || v != want {
			how := "after both writes"
			if answered && c.heldTok < c.otherTok {
				how = fmt.Sprintf("after %s's write with %d was accepted while %s's with %d was between its check and its write", c.other, c.otherTok, c.held, c.heldTok)
			} else if c.heldTok > c.otherTok {
				how = fmt.Sprintf("after %s's write with %d was checked while %s's with %d had been checked but not yet written", c.other, c.otherTok, c.held, c.heldTok)
			}
			t.Errorf("Read(%q) %s = %v, %v, %v, want %v, true, nil: a lower token landed on top of a higher one; the check and the write must be one step",
				resource, how, v, ok, err, want)
		}
	}

	threeWrites(t, h, tg)

	// Then writers under seeded schedules of the store's lock operations
	// (graded by labctl, see checkConcurrentGrants): a check and a write in
	// two lock sections of the store's own are interleaved on every run.
	s := tg.store(t, h)
	seed := suites.Seed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	perm := func(round int) []task.FencingToken {
		tokens := make([]task.FencingToken, raceWorkers)
		for i, p := range rng.Perm(raceWorkers) {
			tokens[i] = task.FencingToken(round*raceWorkers + p + 1)
		}
		return tokens
	}
	for round := range scheduledRounds {
		key := fmt.Sprintf("scheduled-%d", round)
		problem, res := scheduledWriteRound(seed+int64(round), s.FencedStore, key, perm(round))
		if !res.Controlled {
			break // no instrumented locks, or code the schedule cannot drive
		}
		if problem != "" {
			h.Note("round %d (seed %d): %d writers on %q, their lock operations interleaved by the suite:", round+1, seed+int64(round), raceWorkers, key)
			for _, line := range res.Trace {
				h.Note("  %s", line)
			}
			t.Fatalf("round %d: %s", round+1, problem)
		}
	}

	// Then real races, for the race detector: state of the store's own
	// that is not synchronised shows up whether or not the writes happened
	// to interleave.
	h.Note("%d rounds: %d writers with different tokens write one key at the same instant", writeRounds, raceWorkers)
	for round := range writeRounds {
		if problem := freeWriteRound(s.FencedStore, fmt.Sprintf("race-%d", round), perm(round)); problem != "" {
			t.Fatalf("round %d: %s", round+1, problem)
		}
	}
}

func checkPerKey(t *testing.T, h *suites.History, tg target) {
	s := tg.store(t, h)
	accepted := func(token task.FencingToken, key, why string) {
		t.Helper()
		value := fmt.Sprintf("written with %d", token)
		if err := s.write("worker", token, key, value); err != nil {
			t.Errorf("%s = %v, want nil (%s)", writeCall(token, key, value), err, why)
		}
	}
	refused := func(token task.FencingToken, key, why string) {
		t.Helper()
		value := fmt.Sprintf("written with %d", token)
		if err := s.write("worker", token, key, value); !errors.Is(err, task.ErrStaleToken) {
			t.Errorf("%s = %v, want %s (%s)", writeCall(token, key, value), err, wrapping(task.ErrStaleToken), why)
		}
	}
	accepted(100, resource, "the first write to the key")
	accepted(5, "invoice.txt", "invoice.txt has accepted nothing yet; report.txt's 100 does not fence it")
	refused(99, resource, "report.txt has accepted 100")
	accepted(6, "invoice.txt", "invoice.txt has accepted only 5")
	refused(4, "invoice.txt", "invoice.txt has accepted 6")
	for _, key := range []string{"report.txt ", "REPORT.TXT", ""} {
		accepted(1, key, "a key of its own, never written")
	}
	want := map[string]task.FencedValue{
		resource:      {Value: "written with 100", Token: 100},
		"invoice.txt": {Value: "written with 6", Token: 6},
		"":            {Value: "written with 1", Token: 1},
	}
	for key, w := range want {
		if v, ok, err := s.read(key); err != nil || !ok || v != w {
			t.Errorf("Read(%q) = %v, %v, %v, want %v, true, nil", key, v, ok, err, w)
		}
	}
}

// checkCancelled calls every method with a context that is already done,
// and cancels a Write's context while the store reads the key's token and
// while it writes: the KV honours its context, as a real storage client
// does, and the store must return that error and change nothing.
func checkCancelled(t *testing.T, h *suites.History, tg target) {
	l := tg.locks(t, h, 10*time.Second)
	s := tg.store(t, h)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	fakeclock.Advance(2 * time.Second)
	for _, c := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"cancelled", cancelled, context.Canceled}, {"past its deadline", expired, context.DeadlineExceeded}} {
		key := "report-" + strings.ReplaceAll(c.name, " ", "-")
		g, err := l.Acquire(c.ctx, key, "worker A")
		h.Record("worker A", fmt.Sprintf("Acquire(%q) with a context %s", key, c.name), describeGrant(g, err))
		if !errors.Is(err, c.want) {
			t.Errorf("Acquire(%q) with a context %s = %s, want an error wrapping %v", key, c.name, grantString(g, err), c.want)
		}
		held, err := l.acquire("worker B", key)
		if err != nil {
			t.Fatalf("Acquire(%q) after an Acquire with a context %s = %s, want a grant: the cancelled call must not have taken the lock", key, c.name, grantString(held, err))
		}
		err = l.Release(c.ctx, held)
		h.Record("worker B", fmt.Sprintf("Release(token %d of %q) with a context %s", held.Token, key, c.name), describeErr(err, "released"))
		if !errors.Is(err, c.want) {
			t.Errorf("Release(token %d) with a context %s = %v, want an error wrapping %v", held.Token, c.name, err, c.want)
		}
		if g, err := l.acquire("worker C", key); !errors.Is(err, task.ErrLockHeld) {
			t.Errorf("Acquire(%q) after a Release with a context %s = %s, want %s: the cancelled release must not have freed it", key, c.name, grantString(g, err), wrapping(task.ErrLockHeld))
		}

		err = s.Write(c.ctx, held.Token, key, "written with a dead context")
		h.Record("worker B", writeCall(held.Token, key, "written with a dead context")+" with a context "+c.name, describeErr(err, "accepted"))
		if !errors.Is(err, c.want) {
			t.Errorf("%s with a context %s = %v, want an error wrapping %v", writeCall(held.Token, key, "written with a dead context"), c.name, err, c.want)
		}
		if v, ok, err := s.read(key); err != nil || ok {
			t.Errorf("Read(%q) after a Write with a context %s = %v, %v, %v, want nothing written", key, c.name, v, ok, err)
		}
		v, ok, err := s.Read(c.ctx, key)
		h.Record("store", fmt.Sprintf("Read(%q) with a context %s", key, c.name), describeRead(v, ok, err))
		if !errors.Is(err, c.want) {
			t.Errorf("Read(%q) with a context %s = %v, %v, %v, want an error wrapping %v", key, c.name, v, ok, err, c.want)
		}
	}

	// Cancelled in the middle: while the store reads the key's token, and
	// while it writes.
	if err := s.write("worker B", 34, resource, "B's report"); err != nil {
		t.Fatalf("%s to a key never written = %v, want nil", writeCall(34, resource, "B's report"), err)
	}
	want := task.FencedValue{Value: "B's report", Token: 34}
	s.kv.trace = true
	for _, op := range []string{"Get", "Put"} {
		ctx, cancel := context.WithCancel(context.Background())
		s.kv.setHook(func(_ context.Context, o, _ string, _ task.FencedValue) error {
			if o == op {
				cancel() // the caller gives up while the KV call is under way
			}
			return nil
		})
		value := "written while the caller gives up during " + op
		err := s.Write(ctx, 35, resource, value)
		h.Record("worker C", writeCall(35, resource, value), describeErr(err, "accepted"))
		s.kv.setHook(nil)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s, its context cancelled during the KV's %s = %v, want an error wrapping %v", writeCall(35, resource, value), op, err, context.Canceled)
		}
		if v, ok, err := s.read(resource); err != nil || !ok || v != want {
			t.Errorf("Read(%q) after a Write cancelled during the KV's %s = %v, %v, %v, want %v, true, nil", resource, op, v, ok, err, want)
		}
	}

	// Cancelled while it waits for another Write of the same key: it may
	// give up at once or when its turn comes, but it writes nothing.
	arrived, release := s.kv.holdPut(resource, 36)
	defer release()
	var heldErr, waitErr error
	held := suites.Go(func() { heldErr = s.write("worker C", 36, resource, "C's report") })
	select {
	case <-arrived:
	case <-held.Done():
		t.Fatalf("%s after B's 34 = %v without calling the KV's Put, want it stored", writeCall(36, resource, "C's report"), heldErr)
	}
	h.Note("worker C's write has passed its check and is held before it lands; worker D writes the same key")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := suites.Go(func() { waitErr = s.Write(ctx, 37, resource, "D's report") })
	if waiting.Settle() {
		// It did not wait: check_and_write_are_one_step reports that.
		h.Record("worker D", writeCall(37, resource, "D's report"), describeErr(waitErr, "accepted")+", without waiting for C's")
		release()
		held.Wait()
		return
	}
	h.Note("worker D's Write waits for C's; D's context is cancelled")
	cancel()
	waiting.Settle()
	release()
	held.Wait()
	waiting.Wait()
	h.Record("worker D", writeCall(37, resource, "D's report")+", cancelled while it waited", describeErr(waitErr, "accepted"))
	if heldErr != nil {
		t.Errorf("%s = %v, want nil", writeCall(36, resource, "C's report"), heldErr)
	}
	if !errors.Is(waitErr, context.Canceled) {
		t.Errorf("%s, its context cancelled while it waited for another Write of the key = %v, want an error wrapping %v (at once or when its turn comes)", writeCall(37, resource, "D's report"), waitErr, context.Canceled)
	}
	want = task.FencedValue{Value: "C's report", Token: 36}
	if v, ok, err := s.read(resource); err != nil || !ok || v != want {
		t.Errorf("Read(%q) after a Write cancelled while it waited for the key = %v, %v, %v, want %v, true, nil: a Write whose context ended writes nothing", resource, v, ok, err, want)
	}
}

// checkKVFailures fails the store's KV calls. Every failure comes back
// wrapped, and a Write whose Get failed writes nothing: without the key's
// token there is no check, and no write goes through unchecked.
func checkKVFailures(t *testing.T, h *suites.History, tg target) {
	s := tg.store(t, h)
	if err := s.write("worker B", 34, resource, "B's report"); err != nil {
		t.Fatalf("%s to a key never written = %v, want nil", writeCall(34, resource, "B's report"), err)
	}
	want := task.FencedValue{Value: "B's report", Token: 34}
	s.kv.trace = true
	fail := func(op string) {
		s.kv.setHook(func(_ context.Context, o, key string, _ task.FencedValue) error {
			if o == op {
				return fmt.Errorf("kv %s %q: %w", o, key, errKV)
			}
			return nil
		})
	}
	unchanged := func(after string) {
		t.Helper()
		s.kv.setHook(nil)
		if v, ok, err := s.read(resource); err != nil || !ok || v != want {
			t.Errorf("Read(%q) %s = %v, %v, %v, want %v, true, nil", resource, after, v, ok, err, want)
		}
	}

	h.Note("the KV's Get fails from now on")
	fail("Get")
	puts := s.kv.putCount()
	for _, c := range []struct {
		actor string
		token task.FencingToken
	}{{"worker A (zombie)", 33}, {"worker B", 34}, {"worker C", 35}} {
		value := fmt.Sprintf("written with %d", c.token)
		err := s.write(c.actor, c.token, resource, value)
		if !errors.Is(err, errKV) {
			t.Errorf("%s while the KV's Get fails = %v, want an error wrapping the KV's %q", writeCall(c.token, resource, value), err, errKV)
		}
		if n := s.kv.putCount(); n != puts {
			t.Errorf("%s while the KV's Get fails stored a value (%d Put), want none: a write whose token could not be checked must not happen", writeCall(c.token, resource, value), n-puts)
			puts = n
		}
	}
	v, ok, err := s.read(resource)
	if !errors.Is(err, errKV) {
		t.Errorf("Read(%q) while the KV's Get fails = %v, %v, %v, want an error wrapping the KV's %q (not \"nothing written\")", resource, v, ok, err, errKV)
	}
	unchanged("once the KV works again")

	h.Note("the KV's Put fails from now on")
	fail("Put")
	if err := s.write("worker D", 40, resource, "D's report"); !errors.Is(err, errKV) {
		t.Errorf("%s while the KV's Put fails = %v, want an error wrapping the KV's %q: the caller must not believe it was stored", writeCall(40, resource, "D's report"), err, errKV)
	}
	unchanged("once the KV works again")
	h.Note("token 40 was never stored: the key still holds 34, so 35 is not stale")
	if err := s.write("worker C", 35, resource, "C's report"); err != nil {
		t.Errorf("%s after the write with token 40 failed in its Put = %v, want nil: a failed Put accepted nothing, and the key's highest accepted token is still 34", writeCall(35, resource, "C's report"), err)
	}
	if v, ok, err := s.read(resource); err != nil || !ok || v != (task.FencedValue{Value: "C's report", Token: 35}) {
		t.Errorf("Read(%q) after the write with token 35 = %v, %v, %v, want %v, true, nil", resource, v, ok, err, task.FencedValue{Value: "C's report", Token: 35})
	}
}

// threeWrites overlaps three writes to one key: A (10) is held inside its
// Put while B (33) arrives and waits; A lands; B is held inside its Put
// while C (34) arrives. C must wait for B, or be checked against B's token:
// a store that hands a key's lock to the next writer and then forgets it
// (one mutex per key, dropped when its holder leaves, although B was
// waiting for it) lets C in beside B, and B's 33 lands on C's 34.
func threeWrites(t *testing.T, h *suites.History, tg target) {
	h.Note("a new store; three overlapping writes to %q: A (10) held in its Put while B (33) arrives, then B held in its Put while C (34) arrives", resource)
	s := tg.store(t, h)
	s.kv.trace = true
	gates := map[task.FencingToken]chan struct{}{10: make(chan struct{}), 33: make(chan struct{})}
	arrived := map[task.FencingToken]chan struct{}{10: make(chan struct{}), 33: make(chan struct{})}
	var once [2]sync.Once
	s.kv.setHook(func(_ context.Context, op, key string, v task.FencedValue) error {
		if op != "Put" || key != resource {
			return nil
		}
		for i, tok := range []task.FencingToken{10, 33} {
			if v.Token == tok {
				held := false
				once[i].Do(func() { held = true; close(arrived[tok]) })
				if held {
					<-gates[tok]
				}
			}
		}
		return nil
	})
	var releases [2]sync.Once
	release := func() {
		releases[0].Do(func() { close(gates[10]) })
		releases[1].Do(func() { close(gates[33]) })
	}
	defer release()
	var errA, errB, errC error
	a := suites.Go(func() { errA = s.write("worker A", 10, resource, "A's report") })
	select {
	case <-arrived[10]:
	case <-a.Done():
		t.Fatalf("%s on a key never written = %v without reaching the KV's Put, want it stored", writeCall(10, resource, "A's report"), errA)
	}
	b := suites.Go(func() { errB = s.write("worker B", 33, resource, "B's report") })
	b.Settle()
	h.Note("A's write is released and lands")
	releases[0].Do(func() { close(gates[10]) })
	a.Wait()
	select {
	case <-arrived[33]:
	case <-b.Done():
		t.Fatalf("%s after A's 10 = %v without reaching the KV's Put, want it stored", writeCall(33, resource, "B's report"), errB)
	}
	h.Note("B's write has passed its check and is held before it lands; C arrives")
	c := suites.Go(func() { errC = s.write("worker C", 34, resource, "C's report") })
	answered := c.Settle()
	release()
	b.Wait()
	c.Wait()
	if errA != nil || errB != nil || errC != nil {
		t.Errorf("three increasing tokens 10, 33, 34 written one after the other's check: errors %v, %v, %v, want nil, nil, nil", errA, errB, errC)
	}
	want := task.FencedValue{Value: "C's report", Token: 34}
	if v, ok, err := s.read(resource); err != nil || !ok || v != want {
		how := "after the three writes"
		if answered {
			how = "after C's write with 34 was accepted while B's with 33 was between its check and its write"
		}
		t.Errorf("Read(%q) %s = %v, %v, %v, want %v, true, nil: a lower token landed on top of a higher one; a writer waiting for a key must keep it locked out from the writers after it", resource, how, v, ok, err, want)
	}
}
