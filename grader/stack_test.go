package grader

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/rubric"
)

var twoCases = Lab{Dir: "01-claim", Lab: rubric.Lab{Number: 1, TestName: "TestClaim",
	Cases: []rubric.Case{{Name: "a", Points: 50}, {Name: "b", Points: 50}}}}

// outputEvents is a test2json stream of the given output lines, attributed
// to test (none when empty).
func outputEvents(t testing.TB, test string, lines ...string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		e := map[string]any{"Action": "output", "Package": "example/labs/01-claim", "Output": l + "\n"}
		if test != "" {
			e["Test"] = test
		}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestHungCaseReadsTheWholeDump stops a case whose goroutine dump holds tens
// of thousands of goroutines and a line of several MiB before the
// student's frame: the parser reads it all, names the student's frame, and
// keeps only a capped part of the output.
func TestHungCaseReadsTheWholeDump(t *testing.T) {
	var dump []string
	dump = append(dump, "SIGQUIT: quit", "PC=0x1 m=0 sigcode=0", "")
	for i := 1; i <= 30000; i++ {
		dump = append(dump, fmt.Sprintf("goroutine %d gp=0x%x m=nil [chan receive, 3 minutes]:", i, i),
			"runtime.gopark(0x0?)", "\t/usr/local/go/src/runtime/proc.go:435 +0xce fp=0x1 sp=0x2 pc=0x3", "")
	}
	dump = append(dump, strings.Repeat("x", 3<<20))
	dump = append(dump, "",
		"goroutine 40000 gp=0x1 m=nil [sync.Mutex.Lock, 5 minutes, synctest bubble 3]:",
		"sync.(*Mutex).Lock(...)",
		"\t/usr/local/go/src/sync/mutex.go:46",
		"github.com/fourth-outcome/labkit/labs/01-claim.(*Store).Do(0x1, {0x2, 0x3}, 0x4)",
		"\tgithub.com/fourth-outcome/labkit/labs/01-claim/claim.go:42 +0x48 fp=0x1 sp=0x2 pc=0x3",
		"github.com/fourth-outcome/labkit/suites/claimsuite.check(0x1)",
		"\tgithub.com/fourth-outcome/labkit/suites/claimsuite/checks.go:29 +0x365",
		"github.com/fourth-outcome/labkit/labs/01-claim.TestClaim(0x1)",
		"\tgithub.com/fourth-outcome/labkit/labs/01-claim/claim_test.go:12 +0x32",
		"")
	s := stream(t, "run TestClaim", "run TestClaim/a", "pass TestClaim/a", "run TestClaim/b") + outputEvents(t, "TestClaim/b", dump...)
	p := newParser(twoCases, "/kit/labs/01-claim", nil)
	p.newAttempt(nil)
	p.consume(strings.NewReader(s))
	p.endAttempt(runEnd{hung: "b", budget: 10 * time.Second})
	rep := p.report("")
	b := rep.Cases[1]
	if b.Status != StatusTimeout {
		t.Fatalf("hung case status = %s, want %s", b.Status, StatusTimeout)
	}
	want := []string{"did not finish within 10s: blocked in sync.Mutex.Lock at claim.go:42 (Store.Do)"}
	if diff := cmp.Diff(want, b.Output); diff != "" {
		t.Errorf("hung case output (-want +got):\n%s", diff)
	}
	if n := len(p.cases["b"].output); n > maxCaseLines {
		t.Errorf("the parser kept %d lines of the case, want at most %d", n, maxCaseLines)
	}
	if rep.Cases[0].Status != StatusPass {
		t.Errorf("first case status = %s, want pass", rep.Cases[0].Status)
	}
}

// TestHungCaseNamesUpToThreePlaces names the newest goroutines in the lab's
// code, spinning ones first, each place once, and never a test file.
func TestHungCaseNamesUpToThreePlaces(t *testing.T) {
	g := func(id int, state, fn, file string, line int) []string {
		return []string{fmt.Sprintf("goroutine %d gp=0x1 m=nil [%s]:", id, state), fn + "(0x1)",
			fmt.Sprintf("\t/home/ada/kit/labs/01-claim/%s:%d +0x1", file, line), ""}
	}
	var dump []string
	dump = append(dump, g(5, "select", "example/labs/01-claim.(*Store).loop", "claim.go", 30)...)      // left by an earlier case
	dump = append(dump, g(20, "chan receive", "example/labs/01-claim.(*Store).Do", "claim.go", 50)...) // the case's
	dump = append(dump, g(21, "chan receive", "example/labs/01-claim.(*Store).Do", "claim.go", 50)...) // same place again
	dump = append(dump, g(22, "runnable", "example/labs/01-claim.(*Store).Do.func1", "claim.go", 61)...)
	dump = append(dump, g(23, "chan send", "example/labs/01-claim.TestClaim.func1", "claim_test.go", 9)...)
	dump = append(dump, g(24, "semacquire", "example/labs/01-claim.(*Store).wait", "store.go", 7)...)
	sc := newStackScan("labs/01-claim")
	for _, l := range dump {
		sc.line(l)
	}
	want := []Frame{
		{File: "claim.go", Line: 61, Func: "Store.Do.func1", State: "runnable"},
		{File: "store.go", Line: 7, Func: "Store.wait", State: "semacquire"},
		{File: "claim.go", Line: 50, Func: "Store.Do", State: "chan receive"},
	}
	if diff := cmp.Diff(want, sc.hung()); diff != "" {
		t.Errorf("hung() (-want +got):\n%s", diff)
	}
	note := hungNote("did not finish within 2s", want)
	if note[0] != "did not finish within 2s: spinning (runnable) at claim.go:61 (Store.Do.func1)" || len(note) != 3 || note[1] != "  and blocked in semacquire at store.go:7 (Store.wait)" {
		t.Errorf("hungNote() = %q", note)
	}
}

func TestShortFuncAndState(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/fourth-outcome/labkit/labs/01-claim.(*Store).Do(0x1, {0x2, 0x3}, 0x4)": "Store.Do",
		"github.com/fourth-outcome/labkit/labs/01-claim.(*Store).Do.func1()":               "Store.Do.func1",
		"example.com/toy/labs/00-toy.Answer(...)":                                          "Answer",
		"github.com/fourth-outcome/labkit/labs/05-lease.(*Queue[...]).Take(0x1)":           "Queue.Take",
		"main.main()": "main",
	} {
		if got := shortFunc(in); got != want {
			t.Errorf("shortFunc(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"sync.Mutex.Lock, 2 minutes, synctest bubble 1": "sync.Mutex.Lock",
		"chan receive (durable), synctest bubble 4":     "chan receive",
		"select (no cases)":                             "select (no cases)",
		"running":                                       "running",
	} {
		if got := goroutineState(in); got != want {
			t.Errorf("goroutineState(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunPatternQuotesCaseNames(t *testing.T) {
	pat := runPattern("TestClaim", []string{"a.b", "c(d)|e"})
	if want := `^TestClaim$/^(?:a\.b|c\(d\)\|e)$`; pat != want {
		t.Fatalf("runPattern() = %q, want %q", pat, want)
	}
	_, sub, _ := strings.Cut(pat, "/")
	re := regexp.MustCompile(sub)
	for name, want := range map[string]bool{"a.b": true, "c(d)|e": true, "axb": false, "e": false, "a.bc": false} {
		if got := re.MatchString(name); got != want {
			t.Errorf("%s matches %q = %v, want %v", sub, name, got, want)
		}
	}
	if got := runPattern("TestClaim", nil); got != "^TestClaim$" {
		t.Errorf("runPattern(no cases) = %q, want ^TestClaim$", got)
	}
}

// TestAttestationCountsOnlyInTheCaseRun: a case skipped by a rerun's
// -test.run is still "passed" by t.Run, and the suite signs it; that
// signature must not confirm a pass the case claimed in the earlier run
// with forged output.
func TestAttestationCountsOnlyInTheCaseRun(t *testing.T) {
	key1, key2 := []byte("first run key"), []byte("second run key")
	p := newParser(twoCases, "/kit/labs/01-claim", nil)
	p.newAttempt(key1)
	// Run 1: a "passes" by forged framing (no signature), b crashes.
	p.consume(strings.NewReader(stream(t, "run TestClaim", "run TestClaim/a", "pass TestClaim/a", "run TestClaim/b") +
		outputEvents(t, "", "panic: boom", "", "goroutine 7 gp=0x1 m=nil [running]:")))
	p.endAttempt(runEnd{})
	// Run 2 would run what is left (nothing): a and b are skipped, and
	// the suite signs both as passed.
	p.newAttempt(key2)
	p.consume(strings.NewReader(outputEvents(t, "TestClaim", "    suites.go:1: "+signedLine(key2, "TestClaim/a", true), "    suites.go:1: "+signedLine(key2, "TestClaim/b", true))))
	p.endAttempt(runEnd{exited: true})
	rep := p.report("")
	confirmAttested(p, rep)
	rep.Race = true
	rep.Finalize(twoCases)
	if got := []Status{rep.Cases[0].Status, rep.Cases[1].Status}; got[0] != StatusFail || got[1] != StatusCrash {
		t.Errorf("statuses = %v, want the unsigned pass failed and the crash kept", got)
	}
	if rep.Score() != 0 {
		t.Errorf("Score = %d, want 0", rep.Score())
	}
}

// TestFailThenCrashIsACrash: the testing package reports a test's panic (a
// synctest deadlock) as a failure, then panics again with no test name on
// the trace; the case is crashed, with where the lab's code waited.
func TestFailThenCrashIsACrash(t *testing.T) {
	p := newParser(twoCases, "/kit/labs/01-claim", nil)
	p.newAttempt(nil)
	p.consume(strings.NewReader(stream(t, "run TestClaim", "run TestClaim/a", "fail TestClaim/a", "fail TestClaim") +
		outputEvents(t, "",
			"panic: deadlock: all goroutines in bubble are blocked [recovered, repanicked]", "",
			"goroutine 22 [running]:", "testing.tRunner.func1.2({0x1, 0x2})", "\t/usr/local/go/src/testing/testing.go:1974 +0x419", "",
			"goroutine 6 [chan receive (durable), synctest bubble 1]:",
			"github.com/fourth-outcome/labkit/labs/01-claim.(*Store).Do(0x1, {0x2, 0x3})",
			"\t/home/ada/kit/labs/01-claim/claim.go:62 +0x99", "")))
	if progress := p.endAttempt(runEnd{}); !progress {
		t.Errorf("endAttempt() = false, want progress: a case got its verdict")
	}
	rep := p.report("")
	want := "crashed: panic: deadlock: all goroutines in bubble are blocked: blocked in chan receive at claim.go:62 (Store.Do)"
	if c := rep.Cases[0]; c.Status != StatusCrash || len(c.Output) != 1 || c.Output[0] != want {
		t.Errorf("case a = %s %q, want %s %q", c.Status, c.Output, StatusCrash, want)
	}
	if got := p.remaining(); len(got) != 1 || got[0] != "b" {
		t.Errorf("remaining() = %v, want [b] to run again", got)
	}
}
