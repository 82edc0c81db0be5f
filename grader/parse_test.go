package grader

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/fourth-outcome/labkit/attest"
	"github.com/fourth-outcome/labkit/rubric"
)

// stream builds a test2json stream from compact lines "ACTION TEST OUTPUT".
func stream(t *testing.T, lines ...string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		action, rest, _ := strings.Cut(l, " ")
		test, output, _ := strings.Cut(rest, " ")
		if test == "-" {
			test = ""
		}
		e := map[string]any{"Action": action, "Package": "example/labs/01-claim"}
		if test != "" {
			e["Test"] = test
		}
		if action == "output" {
			e["Output"] = output + "\n"
		}
		data, err := json.Marshal(e)
		require.NoError(t, err)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// recordLine is the stream line of the suite's unsigned record r, logged on
// the top-level test after r's case ended, as in a run without a key.
func recordLine(r attest.Record) string {
	return "output TestClaim     suites.go:117: " + attest.Line(r, attest.Unsigned)
}

func ptr[T any](v T) *T { return &v }

func parseStream(t *testing.T, lab Lab, s string) *Report {
	t.Helper()
	p := newParser(lab, "/kit/labs/01-claim", nil)
	p.consume(strings.NewReader(s))
	rep := p.report("")
	rep.Race = true
	rep.Finalize(lab)
	return rep
}

func TestParseFailingCaseKeepsMessagesAndTimeline(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 1, Slug: "claim", Title: "Claim", TestName: "TestClaim",
		Cases: []rubric.Case{{Name: "first", Concept: "c1", Points: 40, Explanation: "E1"}, {Name: "second", Concept: "c2", Points: 60, Explanation: "E2"}}}}
	rep := parseStream(t, lab, stream(t,
		"run TestClaim",
		"run TestClaim/first",
		"output TestClaim/first === RUN   TestClaim/first",
		"pass TestClaim/first",
		"run TestClaim/second",
		`output TestClaim/second     claimsuite.go:42: Do("k1") = "", nil, want "x", nil`,
		"output TestClaim/second --- FAIL: TestClaim/second (0.00s)",
		"fail TestClaim/second",
		recordLine(attest.Record{Test: "TestClaim/second", Clock: attest.ClockVirtual, Seed: ptr(int64(7)), Replay: "labctl check 1 --seed 7",
			Timeline: []string{"t=0s  worker A  Do(k1) -> executed"}}),
		"fail TestClaim",
		"fail -",
	))
	want := []CaseResult{
		{Name: "first", Concept: "c1", Points: 40, Earned: 40, Status: StatusPass, Explanation: "E1"},
		{Name: "second", Concept: "c2", Points: 60, Status: StatusFail, Explanation: "E2",
			Output:   []string{`Do("k1") = "", nil, want "x", nil`, "seed: 7 (replay with: labctl check 1 --seed 7)"},
			Timeline: []string{"t=0s  worker A  Do(k1) -> executed"}, Clock: attest.ClockVirtual},
	}
	if diff := cmp.Diff(want, rep.Cases, cmpopts.IgnoreFields(CaseResult{}, "Elapsed")); diff != "" {
		t.Errorf("cases mismatch (-want +got):\n%s", diff)
	}
	if rep.Score() != 40 || rep.Passed {
		t.Errorf("score %d passed %v, want 40 false", rep.Score(), rep.Passed)
	}
}

func TestParseStatuses(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 1, TestName: "TestClaim",
		Cases: []rubric.Case{{Name: "a", Points: 50}, {Name: "b", Points: 50}}}}
	tests := []struct {
		name  string
		lines []string
		want  []Status
	}{
		{"all pass", []string{"run TestClaim/a", "pass TestClaim/a", "run TestClaim/b", "pass TestClaim/b", "pass -"}, []Status{StatusPass, StatusPass}},
		{"panic recovered by the suite", []string{"run TestClaim/a", "output TestClaim/a     rubric.go:1: panic: boom", "fail TestClaim/a", recordLine(attest.Record{Test: "TestClaim/a", Panicked: true}), "run TestClaim/b", "pass TestClaim/b", "fail -"}, []Status{StatusPanic, StatusPass}},
		// A message that quotes a panic is not one: the suite's record
		// says whether it recovered a panic.
		{"a message quoting a panic", []string{"run TestClaim/a", `output TestClaim/a     checks.go:1: Do() = "panic: boom [recovered]", want "ok"`, "fail TestClaim/a", recordLine(attest.Record{Test: "TestClaim/a"}), "run TestClaim/b", "pass TestClaim/b", "fail -"}, []Status{StatusFail, StatusPass}},
		{"data race", []string{"run TestClaim/a", "output TestClaim/a WARNING: DATA RACE", "output TestClaim/a     testing.go:1: race detected during execution of test", "fail TestClaim/a", "run TestClaim/b", "pass TestClaim/b", "fail -"}, []Status{StatusRace, StatusPass}},
		{"binary died", []string{"run TestClaim/a", "output - fatal error: concurrent map writes", "fail -"}, []Status{StatusCrash, StatusNotRun}},
		{"crashed outside the bubble", []string{"run TestClaim/a", "output - fatal error: close of synctest channel from outside bubble", "fail -"}, []Status{StatusInconclusive, StatusNotRun}},
		{"timeout", []string{"run TestClaim/a", "pass TestClaim/a", "run TestClaim/b", "output TestClaim/b panic: test timed out after 5s", "fail -"}, []Status{StatusPass, StatusTimeout}},
		{"binary exited 0 early", []string{"pass -"}, []Status{StatusNotRun, StatusNotRun}},
		{"inconclusive is not a pass", []string{"run TestClaim/a", "output TestClaim/a     checks.go:9: inconclusive: the claims never interleaved", "skip TestClaim/a", recordLine(attest.Record{Test: "TestClaim/a", Passed: true, Inconclusive: "the claims never interleaved"}), "run TestClaim/b", "pass TestClaim/b", "pass -"}, []Status{StatusInconclusive, StatusPass}},
		{"a plain skip", []string{"run TestClaim/a", "output TestClaim/a     checks.go:9: needs Redis", "skip TestClaim/a", recordLine(attest.Record{Test: "TestClaim/a", Passed: true}), "run TestClaim/b", "pass TestClaim/b", "pass -"}, []Status{StatusSkip, StatusPass}},
		// Only the suite's record makes a skip inconclusive, never the
		// words in a message.
		{"a skip whose message says inconclusive", []string{"run TestClaim/a", "output TestClaim/a     checks.go:9: inconclusive: says the code under test", "skip TestClaim/a", recordLine(attest.Record{Test: "TestClaim/a", Passed: true}), "run TestClaim/b", "pass TestClaim/b", "pass -"}, []Status{StatusSkip, StatusPass}},
		{"suite setup failed", []string{"run TestClaim", "output TestClaim     env.go:9: REDIS_ADDR=127.0.0.1:1: connection refused", "fail TestClaim", "fail -"}, []Status{StatusNotRun, StatusNotRun}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := parseStream(t, lab, stream(t, tt.lines...))
			var got []Status
			for _, c := range rep.Cases {
				got = append(got, c.Status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if allPass := tt.name == "all pass"; rep.Passed != allPass {
				t.Errorf("Passed = %v, want %v", rep.Passed, allPass)
			}
		})
	}
}

// parseLab is a fixed two-case lab for the parser's tests.
var parseLab = Lab{Dir: "01-claim", Lab: rubric.Lab{Number: 1, Slug: "claim", Title: "Claim before you execute", TestName: "TestClaim",
	Cases: []rubric.Case{{Name: "first_case", Points: 40}, {Name: "racing_case", Points: 60}},
}}

func TestParseBuildFailure(t *testing.T) {
	lab := parseLab
	s := `{"ImportPath":"example/labs/01-claim [example/labs/01-claim.test]","Action":"build-output","Output":"# example/labs/01-claim\n"}
{"ImportPath":"example/labs/01-claim [example/labs/01-claim.test]","Action":"build-output","Output":"labs/01-claim/claim.go:12:9: undefined: errInProgress\n"}
{"ImportPath":"example/labs/01-claim [example/labs/01-claim.test]","Action":"build-fail"}
{"Action":"start","Package":"example/labs/01-claim"}
{"Action":"output","Package":"example/labs/01-claim","Output":"FAIL\texample/labs/01-claim [build failed]\n"}
{"Action":"fail","Package":"example/labs/01-claim","Elapsed":0,"FailedBuild":"example/labs/01-claim [example/labs/01-claim.test]"}
`
	rep := parseStream(t, lab, s)
	require.NotNil(t, rep.Build, "a build failure must be reported")
	want := []CompileError{{File: "claim.go", Line: 12, Column: 9, Message: "undefined: errInProgress"}}
	if diff := cmp.Diff(want, rep.Build.Errors); diff != "" {
		t.Errorf("compile errors (-want +got):\n%s", diff)
	}
	if rep.Passed || rep.Score() != 0 {
		t.Errorf("Passed %v score %d, want false 0", rep.Passed, rep.Score())
	}
}

// TestParseBuildFailureNamesTheLearnersFile: the compiler names the
// cache copy of a file whose "sync" import was instrumented; every
// position in the output names the learner's file, at the same line.
func TestParseBuildFailureNamesTheLearnersFile(t *testing.T) {
	const cp = "/home/ann/.cache/labkit/overlay/8f6fe41ffaac088a/claim.go"
	p := newParser(parseLab, "/kit/labs/01-claim", nil)
	p.buildPaths = map[string]string{cp: "labs/01-claim/claim.go"}
	p.buildFailed = true
	p.buildOutput = []string{
		"# example/labs/01-claim [example/labs/01-claim.test]",
		cp + `:50:19: cannot use "x" (untyped string constant) as int value in variable declaration`,
		cp + ":61:6: Store redeclared in this block",
		"	" + cp + ":20:6: other declaration of Store",
	}
	rep := p.report("")
	require.NotNil(t, rep.Build)
	want := `labs/01-claim/claim.go:50:19: cannot use "x" (untyped string constant) as int value in variable declaration
labs/01-claim/claim.go:61:6: Store redeclared in this block
	labs/01-claim/claim.go:20:6: other declaration of Store`
	if rep.Build.Output != want {
		t.Errorf("build output = %q, want %q", rep.Build.Output, want)
	}
	if got := rep.Build.Errors; len(got) != 3 || got[0].File != "claim.go" || got[0].Line != 50 || got[2].Line != 20 {
		t.Errorf("compile errors = %+v, want claim.go at lines 50, 61 and 20", got)
	}
}

// TestParseBuildFailureNamesTheLearnersImports: an unused import the
// grader pointed at suites/syncpoint is named as the learner wrote it.
func TestParseBuildFailureNamesTheLearnersImports(t *testing.T) {
	const cp = "/home/ann/.cache/labkit/overlay/8f6fe41ffaac088a/retry.go"
	lab := parseLab
	lab.InstrumentSync, lab.InstrumentAtomic = true, true
	p := newParser(lab, "/kit/labs/04-retry", nil)
	p.buildPaths = map[string]string{cp: "labs/04-retry/retry.go"}
	p.buildFailed = true
	p.buildOutput = []string{
		cp + `:5:2: "` + SyncPointAtomicPackage + `" imported and not used`,
		cp + `:6:2: "` + SyncPointPackage + `" imported as sync and not used`,
		cp + `:7:2: "` + SyncPointPackage + `" imported as gosync and not used`,
	}
	rep := p.report("")
	require.NotNil(t, rep.Build)
	want := `labs/04-retry/retry.go:5:2: "sync/atomic" imported and not used
labs/04-retry/retry.go:6:2: "sync" imported and not used
labs/04-retry/retry.go:7:2: "sync" imported as gosync and not used`
	if rep.Build.Output != want {
		t.Errorf("build output = %q, want %q", rep.Build.Output, want)
	}
}

func TestParseSetupFailureIsShown(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 2, TestName: "TestRedis", Cases: []rubric.Case{{Name: "a", Points: 100}}}}
	rep := parseStream(t, lab, strings.ReplaceAll(stream(t, "run TestX", "output TestX     env.go:9: REDIS_ADDR=127.0.0.1:1: connection refused", "fail TestX", "fail -"), "TestX", "TestRedis"))
	require.NotEmpty(t, rep.Problems)
	if !strings.Contains(rep.Problems[0], "stopped before its first case") || !strings.Contains(rep.Problems[0], "connection refused") {
		t.Errorf("Problems[0] = %q, want the setup failure and its message", rep.Problems[0])
	}
}

// TestParseCrashOutsideTheBubbleIsNotTheLearners runs the stream of a
// correct store whose runtime.AddCleanup callback closes a channel made in
// the case's bubble: the case is not exercised, earns nothing, and says
// what the harness cannot run and what to write instead, with no
// misconception.
func TestParseCrashOutsideTheBubbleIsNotTheLearners(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 1, TestName: "TestClaim",
		Cases: []rubric.Case{{Name: "a", Points: 50, Concept: "atomic-claim"}, {Name: "b", Points: 50}}}}
	rep := parseStream(t, lab, stream(t, "run TestClaim/a",
		"output - fatal error: close of synctest channel from outside bubble",
		"output - ",
		"output - goroutine 7 [running]:",
		"fail -"))
	c := rep.Cases[0]
	if c.Status != StatusInconclusive || c.Earned != 0 {
		t.Fatalf("case a = %s, %d points, want %s and 0 points", c.Status, c.Earned, StatusInconclusive)
	}
	out := strings.Join(c.Output, "\n")
	for _, want := range []string{"the suite cannot run this code", "close of synctest channel from outside bubble", "runtime.AddCleanup", "Close method"} {
		if !strings.Contains(out, want) {
			t.Errorf("case a's output lacks %q:\n%s", want, out)
		}
	}
}
