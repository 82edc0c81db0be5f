package grader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
)

// The toy lab is a kit of its own, made in a test's temporary directory:
// module example.com/toy with one lab, labs/00-toy, whose suite TestToy has
// three cases that each call Answer once. Its cases take microseconds, so a
// case budget of seconds leaves a margin of thousands even on a loaded
// machine: only a case that really hangs can be judged hung.
const toyShim = `package toy

import "testing"

func TestToy(t *testing.T) {
	for _, c := range []string{"first", "second", "third"} {
		t.Run(c, func(t *testing.T) {
			if got := Answer(c); got != c {
				t.Errorf("Answer(%q) = %q, want %q", c, got, c)
			}
		})
	}
}
`

// toyCaseTimeout is the toy lab's per-case budget.
const toyCaseTimeout = 2 * time.Second

var toyLab = Lab{
	Lab: rubric.Lab{Number: 0, Slug: "toy", Title: "Toy", TestName: "TestToy", Cases: []rubric.Case{
		{Name: "first", Concept: "c", Points: 30},
		{Name: "second", Concept: "c", Points: 40},
		{Name: "third", Concept: "c", Points: 30},
	}},
	Dir: "00-toy", TestFile: "toy_test.go", Shim: toyShim,
	// The toy allows what the sandbox's own tests need to attack it with
	// (a course lab refuses syscall and os/exec before the build; these
	// tests check the layer beneath that screen).
	Imports: []string{"os", "os/exec", "path/filepath", "strconv", "strings", "sync", "syscall", "time"},
}

// toyKit writes the toy kit and an implementation whose Answer is body (a
// function of c that returns c when it returns at all), and returns the
// kit's root and the implementation's directory.
func toyKit(tb testing.TB, imports, body string) (root, impl string) {
	tb.Helper()
	root = tb.TempDir()
	impl = tb.TempDir()
	files := map[string]string{
		filepath.Join(root, "go.mod"):                        "module example.com/toy\n\ngo 1.26\n",
		filepath.Join(root, "labs", "00-toy", "toy.go"):      "package toy\n\nfunc Answer(c string) string { return \"\" }\n",
		filepath.Join(root, "labs", "00-toy", "toy_test.go"): toyShim,
		filepath.Join(impl, "toy.go"):                        "package toy\n\nimport (\n" + imports + ")\n\n" + body,
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root, impl
}

// lineOf is the 1-based line of the first line of impl/toy.go holding mark.
func lineOf(tb testing.TB, impl, mark string) int {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(impl, "toy.go"))
	if err != nil {
		tb.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, mark) {
			return i + 1
		}
	}
	tb.Fatalf("toy.go has no line with %q", mark)
	return 0
}

// gradeToy grades the toy implementation, on the overlay path or, with
// hermetic, in a scratch kit under the sandbox when there is one.
func gradeToy(t *testing.T, root, impl string, hermetic bool) *Report {
	t.Helper()
	opts := Options{Root: root, Lab: toyLab, Impl: impl, Timeout: time.Minute, CaseTimeout: toyCaseTimeout}
	if hermetic {
		opts.Kit = &Kit{Dir: root, Scratch: t.TempDir(), Module: "example.com/toy", Commit: "test"}
		opts.Sandbox = testSandbox(t)
	}
	rep, err := RunGoTest(context.Background(), opts)
	if err != nil {
		t.Fatalf("RunGoTest(toy) error = %v", err)
	}
	return rep
}

func statusList(rep *Report) []Status {
	var out []Status
	for _, c := range rep.Cases {
		out = append(out, c.Status)
	}
	return out
}

// bothPaths runs f on the overlay path and the hermetic path, in parallel.
func bothPaths(t *testing.T, f func(t *testing.T, hermetic bool)) {
	t.Helper()
	for _, hermetic := range []bool{false, true} {
		name := "overlay"
		if hermetic {
			name = "hermetic"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, hermetic)
		})
	}
}

// TestHangCostsOneCase grades a toy lab whose second case blocks forever on
// a mutex: that case alone times out, naming the student's line and
// "blocked", and the third case still runs, in a fresh process, and passes.
// It waits for the case budget by design.
func TestHangCostsOneCase(t *testing.T) {
	root, impl := toyKit(t, "\t\"sync\"\n", `var mu sync.Mutex

func Answer(c string) string {
	if c == "second" {
		mu.Lock()
		mu.Lock() // HANG
	}
	return c
}
`)
	line := lineOf(t, impl, "HANG")
	bothPaths(t, func(t *testing.T, hermetic bool) {
		rep := gradeToy(t, root, impl, hermetic)
		want := []Status{StatusPass, StatusTimeout, StatusPass}
		if got := statusList(rep); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses = %v, want %v; problems %q", got, want, rep.Problems)
		}
		if rep.Score() != 60 {
			t.Errorf("Score = %d, want 60 (the hung case alone earns nothing)", rep.Score())
		}
		c := rep.Cases[1]
		wantLine := fmt.Sprintf("did not finish within %s: blocked in sync.Mutex.Lock at toy.go:%d (Answer)", toyCaseTimeout, line)
		if len(c.Output) == 0 || c.Output[0] != wantLine {
			t.Errorf("hung case output = %q, want it to start with %q", c.Output, wantLine)
		}
		if len(c.Where) != 1 || c.Where[0] != (Frame{File: "toy.go", Line: line, Func: "Answer", State: "sync.Mutex.Lock"}) {
			t.Errorf("hung case Where = %+v, want toy.go:%d in Answer, sync.Mutex.Lock", c.Where, line)
		}
		for _, l := range c.Output {
			if strings.Contains(l, "goroutine ") || strings.Contains(l, root) || strings.Contains(l, "SIGQUIT") {
				t.Errorf("hung case output shows the dump or a path of this machine: %q", l)
			}
		}
		if len(rep.Problems) != 0 {
			t.Errorf("Problems = %q, want none: the hang is the case's verdict", rep.Problems)
		}
	})
}

// TestBusyLoopIsSpinning grades a toy lab whose second case never leaves a
// loop: it times out as spinning at the loop's line. It waits for the case
// budget by design.
func TestBusyLoopIsSpinning(t *testing.T) {
	// Not inlined, as a lab's methods are not (the suites call them
	// through interfaces): a loop inlined into the test's closure would
	// be reported at the closure's line.
	root, impl := toyKit(t, "", `var n int

//go:noinline
func Answer(c string) string {
	for c == "second" {
		n++ // SPIN
	}
	return c
}
`)
	bothPaths(t, func(t *testing.T, hermetic bool) {
		rep := gradeToy(t, root, impl, hermetic)
		want := []Status{StatusPass, StatusTimeout, StatusPass}
		if got := statusList(rep); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses = %v, want %v; problems %q", got, want, rep.Problems)
		}
		c := rep.Cases[1]
		if len(c.Where) == 0 || !c.Where[0].Spinning() || c.Where[0].File != "toy.go" || c.Where[0].Func != "Answer" {
			t.Fatalf("busy case Where = %+v, want toy.go in Answer, running or runnable", c.Where)
		}
		// The goroutine is stopped somewhere in the loop: its condition
		// or its body.
		if l := c.Where[0].Line; l < lineOf(t, impl, "for c ==") || l > lineOf(t, impl, "SPIN") {
			t.Errorf("busy case stopped at toy.go:%d, want a line of the loop", l)
		}
		if len(c.Output) == 0 || !strings.Contains(c.Output[0], "spinning (") {
			t.Errorf("busy case output = %q, want it to say spinning", c.Output)
		}
	})
}

// TestCrashCostsOneCase grades a toy lab whose second case panics in a
// goroutine nobody recovers, which ends the test binary: that case alone is
// crashed, with the panic and the student's line, and the third still runs
// and passes.
func TestCrashCostsOneCase(t *testing.T) {
	root, impl := toyKit(t, "", `func Answer(c string) string {
	if c == "second" {
		done := make(chan bool)
		go func() {
			var m map[string]int
			m[c] = 1 // PANIC
			close(done)
		}()
		<-done
	}
	return c
}
`)
	line := lineOf(t, impl, "PANIC")
	bothPaths(t, func(t *testing.T, hermetic bool) {
		rep := gradeToy(t, root, impl, hermetic)
		want := []Status{StatusPass, StatusCrash, StatusPass}
		if got := statusList(rep); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses = %v, want %v; problems %q", got, want, rep.Problems)
		}
		wantLine := fmt.Sprintf("crashed: panic: assignment to entry in nil map at toy.go:%d (Answer.func1)", line)
		if c := rep.Cases[1]; len(c.Output) == 0 || c.Output[0] != wantLine {
			t.Errorf("crashed case output = %q, want it to start with %q", c.Output, wantLine)
		}
	})
}

// TestExitInInitStops grades a toy lab whose init exits with success: no
// case ever runs, the grader does not run the binary again and again, and
// every case is not run with the reason.
func TestExitInInitStops(t *testing.T) {
	root, impl := toyKit(t, "\t\"os\"\n", `func init() { os.Exit(0) }

func Answer(c string) string { return c }
`)
	bothPaths(t, func(t *testing.T, hermetic bool) {
		start := time.Now()
		rep := gradeToy(t, root, impl, hermetic)
		if got, want := statusList(rep), []Status{StatusNotRun, StatusNotRun, StatusNotRun}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
		if c := rep.Cases[0]; len(c.Output) == 0 || !strings.Contains(c.Output[0], "exited with success") {
			t.Errorf("not-run case output = %q, want the early exit named", c.Output)
		}
		if rep.Passed || len(rep.Problems) == 0 {
			t.Errorf("Passed = %v, Problems = %q; want a failing report that says why", rep.Passed, rep.Problems)
		}
		// A loop would rerun until the time limit: a minute.
		if took := time.Since(start); took > 40*time.Second {
			t.Errorf("grading took %s, want one run of the binary", took)
		}
	})
}

// TestFailFastStopsAtTheFirstFailure grades a toy whose second case fails
// and whose third would hang, with FailFast: the run stops after the
// second case, so the third is not run (and does not cost its budget), and
// is not run again in a fresh process.
func TestFailFastStopsAtTheFirstFailure(t *testing.T) {
	root, impl := toyKit(t, "\t\"sync\"\n", `var mu sync.Mutex

func Answer(c string) string {
	switch c {
	case "second":
		return "wrong"
	case "third":
		mu.Lock()
		mu.Lock() // hangs, if the suite ever gets here
	}
	return c
}
`)
	rep, err := RunGoTest(context.Background(), Options{Root: root, Lab: toyLab, Impl: impl, Timeout: time.Minute, CaseTimeout: toyCaseTimeout, FailFast: true})
	if err != nil {
		t.Fatalf("RunGoTest(toy, FailFast) error = %v", err)
	}
	want := []Status{StatusPass, StatusFail, StatusNotRun}
	if got := statusList(rep); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("RunGoTest(toy, FailFast) statuses = %v, want %v\n%+v", got, want, rep.Cases)
	}
	if !strings.Contains(strings.Join(rep.Cases[2].Output, "\n"), "fail-fast") {
		t.Errorf("the case not run says %q, want it to say the run stopped fail-fast", rep.Cases[2].Output)
	}
}
