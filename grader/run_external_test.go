package grader_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/course"
	. "github.com/fourth-outcome/labkit/grader"
)

func claimLab(tb testing.TB) Lab {
	tb.Helper()
	lab, err := course.Find("claim")
	if err != nil {
		tb.Fatal(err)
	}
	return lab.Lab
}

// kitRoot is the repository root, one level up from this package.
func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// raceOK reports whether -race works here (cgo and a C compiler).
func raceOK() bool {
	ok, _ := RaceSupport()
	return ok
}

func grade(t *testing.T, opts Options) *Report {
	t.Helper()
	opts.Root = kitRoot(t)
	if opts.Lab.Dir == "" {
		opts.Lab = claimLab(t)
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	holdRunAs(t, opts.RunAs, false)
	rep, err := RunGoTest(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run(%s) error = %v", opts.Impl, err)
	}
	return rep
}

func submission(name string) string {
	abs, _ := filepath.Abs(filepath.Join("testdata", "submissions", name))
	return abs
}

func statuses(rep *Report) map[Status]int {
	m := map[Status]int{}
	for _, c := range rep.Cases {
		m[c.Status]++
	}
	return m
}

func TestRunSolutionPasses(t *testing.T) {
	t.Parallel()
	rep := grade(t, Options{Impl: filepath.Join(kitRoot(t), "solutions", "01-claim"), Race: raceOK()})
	if !rep.Passed || rep.Score() != rep.Total {
		t.Fatalf("solution: Passed=%v score %d/%d, want a pass; failing: %v", rep.Passed, rep.Score(), rep.Total, rep.Failed())
	}
}

func TestRunStarterFailsEveryCaseWithoutBuildError(t *testing.T) {
	t.Parallel()
	rep := grade(t, Options{Race: raceOK()})
	if rep.Build != nil {
		t.Fatalf("starter: build failure %v, want it to compile", rep.Build.Output)
	}
	if rep.Score() != 0 || len(rep.Failed()) != len(rep.Cases) {
		t.Errorf("starter: score %d with %d of %d cases failing, want 0 and all", rep.Score(), len(rep.Failed()), len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if !strings.Contains(strings.Join(c.Output, "\n"), "not implemented") {
			t.Errorf("starter case %s output does not mention \"not implemented\": %q", c.Name, c.Output)
		}
	}
}

// TestRunHostileSubmissions grades broken and hostile submissions: each gets
// a clear, failing report, never a pass and never a grader error.
func TestRunHostileSubmissions(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		race    bool
		check   func(t *testing.T, rep *Report)
	}{
		{"build-error", 0, false, func(t *testing.T, rep *Report) {
			if rep.Build == nil || len(rep.Build.Errors) == 0 {
				t.Fatalf("Build = %+v, want compile errors with positions", rep.Build)
			}
			e := rep.Build.Errors[0]
			if e.File != "claim.go" || e.Line == 0 {
				t.Errorf("first compile error at %s:%d, want claim.go:<line>", e.File, e.Line)
			}
			if n := statuses(rep)[StatusNotRun]; n != len(rep.Cases) {
				t.Errorf("%d cases not run, want all %d", n, len(rep.Cases))
			}
		}},
		{"os-exit-1", 0, false, func(t *testing.T, rep *Report) {
			// Every case calls Do, each in a fresh run of the binary.
			if statuses(rep)[StatusNoFinish] != len(rep.Cases) {
				t.Errorf("statuses = %v, want every case did-not-finish", statuses(rep))
			}
			if out := rep.Cases[0].Output; len(out) == 0 || !strings.Contains(out[0], "exited in the middle of this case") {
				t.Errorf("first case output = %q, want the exit explained", out)
			}
		}},
		{"os-exit-0-init", 0, false, func(t *testing.T, rep *Report) {
			if statuses(rep)[StatusNotRun] != len(rep.Cases) {
				t.Errorf("statuses = %v, want every case not run", statuses(rep))
			}
			if len(rep.Problems) == 0 {
				t.Error("Problems is empty, want the early successful exit explained")
			}
		}},
		{"os-exit-3-init", 0, false, func(t *testing.T, rep *Report) {
			if statuses(rep)[StatusNotRun] != len(rep.Cases) {
				t.Errorf("statuses = %v, want every case not run", statuses(rep))
			}
			if want := `its last output: "claim: cannot read config.json"`; len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], want) {
				t.Errorf("Problems = %q, want the binary's last words quoted (%s)", rep.Problems, want)
			}
		}},
		{"panic-in-goroutine", 0, false, func(t *testing.T, rep *Report) {
			c := rep.Cases[0]
			if c.Status != StatusCrash {
				t.Errorf("first case status = %s, want %s", c.Status, StatusCrash)
			}
			if want := "crashed: panic: assignment to entry in nil map at claim.go:19 (Store.Do.func1)"; len(c.Output) == 0 || c.Output[0] != want {
				t.Errorf("first case output = %q, want it to start with %q", c.Output, want)
			}
		}},
		{"blocks-forever", 5 * time.Second, false, func(t *testing.T, rep *Report) {
			// The run's limit (5s) ends before the case's budget (10s):
			// the first case times out, and no case after it runs.
			if statuses(rep)[StatusTimeout] != 1 || statuses(rep)[StatusNotRun] != len(rep.Cases)-1 {
				t.Errorf("statuses = %v, want one timeout and the rest not run", statuses(rep))
			}
			if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "time limit") {
				t.Errorf("Problems = %q, want the time limit explained", rep.Problems)
			}
			if out := rep.Cases[0].Output; len(out) == 0 || !strings.Contains(out[0], "blocked in sync.Mutex.Lock at claim.go:17 (Store.Do)") {
				t.Errorf("first case output = %q, want where it blocked", out)
			}
		}},
		{"data-race", 0, true, func(t *testing.T, rep *Report) {
			all := strings.Join(rep.Problems, "\n")
			for _, c := range rep.Cases {
				all += strings.Join(c.Output, "\n")
			}
			if statuses(rep)[StatusRace] == 0 && !strings.Contains(all, "concurrent map") {
				t.Errorf("statuses = %v, want a data race (or the runtime's concurrent map error) reported", statuses(rep))
			}
		}},
		{"edited-test", 0, false, func(t *testing.T, rep *Report) {
			if rep.Score() != 0 || len(rep.Failed()) != len(rep.Cases) {
				t.Errorf("score %d/%d, want the edited test ignored and every case failing", rep.Score(), rep.Total)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.race && !raceOK() {
				t.Skip("the race detector needs cgo")
			}
			rep := grade(t, Options{Impl: submission(tt.name), Timeout: tt.timeout, Race: tt.race})
			if rep.Passed {
				t.Fatalf("%s: Passed = true, want a failing report", tt.name)
			}
			if len(rep.Cases) != len(claimLab(t).Cases) {
				t.Fatalf("%s: %d cases in report, want %d", tt.name, len(rep.Cases), len(claimLab(t).Cases))
			}
			tt.check(t, rep)
		})
	}
}

func TestVerifyLab01(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per mistake")
	}
	checks, err := Verify(context.Background(), []Lab{claimLab(t)}, VerifyOptions{Root: kitRoot(t), Race: raceOK()})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s", c)
		}
		kinds = append(kinds, c.Kind)
	}
	if !slices.Contains(kinds, "starter") || !slices.Contains(kinds, "solution") || slices.Index(kinds, "mistake") < 0 {
		t.Errorf("checks cover %v, want starter, solution and mistakes", kinds)
	}
}
