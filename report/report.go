// Package report holds what a graded run produces and the one place its
// score is computed: a Lab (what grading needs to know of a lab), a Report
// of the run with a CaseResult per case, and Report.Finalize, which applies
// every scoring rule. It is a leaf: it imports only the rubric and the
// diagnosis tables, so the grader that fills a Report, the formats that
// render one and the gradebook that stores one all depend on it, and it on
// none of them.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/rubric"
)

// Lab is what the grader needs to know of a lab: its rubric, where it lives
// and the pristine test shim overlaid on every run. The grader knows no lab
// by name; package course registers them.
type Lab struct {
	rubric.Lab
	Dir      string // directory under labs/ and solutions/, "01-claim"
	TestFile string // the shim's file name, "claim_test.go"
	Shim     string // the shim's pristine contents
	// Starter is the lab's pristine starter, its non-test .go files by
	// name, as the kit ships them in labs/: the kit's own checks grade
	// these, never labs/, where a learner's work replaces them.
	Starter map[string]string
	NextLab int // the number of the lab that follows, 0 for the last one
	// Fixtures is the directory, relative to the kit root, of the suite's
	// independent test programs: testdata/wrong/<name>/ must each be
	// caught, testdata/correct/<name>/ must each pass ("suites/claimsuite").
	Fixtures string
	// InstrumentSync grades the implementation with its "sync" import
	// pointed at SyncPointPackage, whose mutexes the suite can schedule.
	InstrumentSync bool
	// InstrumentAtomic grades the implementation with its "sync/atomic"
	// import pointed at SyncPointAtomicPackage, whose operations the suite
	// can schedule.
	InstrumentAtomic bool
	// Imports is every package the lab's code may import, sorted: the
	// standard packages the course allows every lab and the kit or
	// third-party packages this lab needs. The grader refuses any other
	// import before it builds a submission ("unsafe" included).
	Imports []string
	// Signatures is what each of the lab's catalogued mistakes fails
	// (course/signatures, written by labctl verify --write-signatures):
	// a failing run that looks like one of them is shown its
	// misconception (Report.Diagnosis).
	Signatures []diagnosis.Signature
}

// AllowImport says why a lab's code may not import path, or returns nil.
func (l Lab) AllowImport(path string) error {
	if slices.Contains(l.Imports, path) {
		return nil
	}
	switch {
	case path == "C":
		return errors.New(`imports "C": cgo is not allowed in a submission`)
	case path == "unsafe":
		return errors.New(`imports "unsafe": a submission may not step outside Go's memory safety`)
	}
	return fmt.Errorf("imports %q, which lab %02d does not allow; it may import %s", path, l.Number, strings.Join(l.Imports, ", "))
}

// Status is the outcome of one case.
type Status string

// The statuses a case can end in. Only StatusPass earns points.
const (
	StatusPass     Status = "pass"
	StatusFail     Status = "fail"
	StatusPanic    Status = "panic"          // the implementation panicked
	StatusRace     Status = "data race"      // the race detector found a data race
	StatusTimeout  Status = "timeout"        // the case ran past its time budget (it hung) and was stopped
	StatusCrash    Status = "crashed"        // the test binary crashed (a panic nobody recovered, a fatal error) while the case ran
	StatusNoFinish Status = "did not finish" // the test binary exited, or was stopped by a limit, while the case ran
	StatusNotRun   Status = "not run"        // the binary never reached the case
	StatusSkip     Status = "skipped"
	// StatusInconclusive is a case that could not exercise its property
	// on this run (a race that never interleaved, say): it earns nothing
	// and says so, because inconclusive is not a pass.
	StatusInconclusive Status = "not exercised"
)

// ReportVersion is the version of the Report's JSON shape that labctl
// check --json prints: a change that removes or renames a field, or
// changes its meaning, raises it; a new field does not.
const ReportVersion = 1

// Report is the result of one graded run.
type Report struct {
	Lab    int    `json:"lab"`
	Slug   string `json:"slug"`
	Title  string `json:"title"`
	Target string `json:"target"` // what was graded: "labs/01-claim", "solution", "mistake check-then-insert", a submission's name
	// score is what the run earned: Finalize sets it, Score reads it, and
	// nothing else can write it.
	score  int
	Total  int    `json:"total"`
	Passed bool   `json:"passed"` // every case passed
	Race   bool   `json:"race"`   // the race detector was on
	Seed   string `json:"seed,omitempty"`
	// Redis is the Redis server a Redis lab's suite ran against: "embedded
	// miniredis", or the real server's "host:port db N" (never its
	// credentials). Empty for a lab that uses no Redis.
	Redis   string `json:"redis,omitempty"`
	Kit     string `json:"kit,omitempty"`     // the kit commit graded against, for reproducing the grade
	Sandbox string `json:"sandbox,omitempty"` // where the test binary ran: "bwrap" or "off" (class grading only)
	Limit   string `json:"limit,omitempty"`   // the resource limit that stopped the run, if one did
	// Tampered, when set, says why the run's output is not the suite's
	// own (an attestation the suite did not sign, one seen twice, a
	// signed failure reported passed): the run is void and scores 0.
	Tampered string `json:"tampered,omitempty"`
	// BuildTime and RunTime split Duration for hermetic runs: building
	// the test binary (compile and link) and running it.
	BuildTime time.Duration `json:"build_ns,omitempty"`
	RunTime   time.Duration `json:"run_ns,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
	Build     *BuildFailure `json:"build,omitempty"`
	Problems  []string      `json:"problems,omitempty"` // run-wide: timeouts, a binary that exited early, races outside a case
	Cases     []CaseResult  `json:"cases"`

	// Notes say, once per run, what the sandbox could not enforce on this
	// machine (no Landlock, no PID namespace, a limit only polled): about
	// the grading, not the submission.
	Notes []string `json:"notes,omitempty"`
	// NotStarted is set when every case failed with the starter's "not
	// implemented" error (NotImplementedWords): the lab has not been
	// started. Finalize sets it; every feedback reads it.
	NotStarted bool `json:"not_started,omitempty"`
	// Diagnosis, for a failing run whose failures look like a catalogued
	// mistake's (diagnosis.Diagnose, at least diagnosis.Threshold close and
	// not tied with a mistake of another concept), names that mistake,
	// with the evidence. Finalize sets it.
	Diagnosis *diagnosis.Match `json:"diagnosis,omitempty"`
	// Unclean is set by the grader when the run itself went wrong beyond
	// its cases (the package failed with every case passing, a problem
	// outside any case): such a run does not count as passed.
	Unclean bool `json:"-"`
	// finalized is set by Finalize, so that a second call does not
	// repeat its problems.
	finalized bool
}

// BuildFailure describes a submission that did not compile.
type BuildFailure struct {
	Errors []CompileError `json:"errors"`
	Output string         `json:"output"` // the compiler's output, trimmed
}

// CompileError is one compiler message, with its position relative to the
// lab directory.
type CompileError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// CaseResult is the outcome of one case of the suite.
type CaseResult struct {
	Name        string   `json:"name"`
	Concept     string   `json:"concept"`
	Points      int      `json:"points"`
	Earned      int      `json:"earned"`
	Status      Status   `json:"status"`
	Explanation string   `json:"explanation"`
	Output      []string `json:"output,omitempty"`   // the failure messages, trimmed
	Timeline    []string `json:"timeline,omitempty"` // the case's history, when it failed
	// Clock is the clock the timeline was taken on: "virtual" (the same
	// on every run) or "real" (a real server's; it differs between runs).
	Clock string `json:"clock,omitempty"`
	// Where, for a case that hung or crashed, is where the lab's code was:
	// up to three goroutines' innermost frames in the lab's own files.
	Where   []Frame `json:"where,omitempty"`
	Elapsed float64 `json:"elapsed_s"`
}

// Score is the points the run earned, as Finalize computed them (0
// before Finalize): the only score there is.
func (r *Report) Score() int { return r.score }

// MarshalJSON writes the report with its version (ReportVersion) first and
// its score, which is unexported so that only Finalize sets it.
func (r Report) MarshalJSON() ([]byte, error) {
	type fields Report // the same fields, without this method
	return json.Marshal(struct {
		Version int `json:"version"`
		fields
		Score int `json:"score"`
	}{ReportVersion, fields(r), r.score})
}

// UnmarshalJSON reads a report that MarshalJSON wrote, score included: a
// stored report is read back as it was finalized.
func (r *Report) UnmarshalJSON(data []byte) error {
	type fields Report
	var v struct {
		fields
		Score int `json:"score"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = Report(v.fields)
	r.score = v.Score
	return nil
}

// Failed returns the cases that did not pass, in suite order.
func (r *Report) Failed() []CaseResult {
	var out []CaseResult
	for _, c := range r.Cases {
		if c.Status != StatusPass {
			out = append(out, c)
		}
	}
	return out
}

// FailedConcepts returns the IDs of the concepts of failing cases, each
// once, in suite order.
func (r *Report) FailedConcepts() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range r.Failed() {
		if !seen[c.Concept] {
			seen[c.Concept] = true
			out = append(out, c.Concept)
		}
	}
	return out
}

// NotImplementedWords are the words, lower case, one of which every
// failure of an unstarted lab's starter contains ("claim: not implemented
// yet (TODO in labs/01-claim/claim.go)").
var NotImplementedWords = []string{"not implemented", "todo"}

// RaceOff is the output of a passing case that needed the race detector in
// a run without it (see Finalize).
const RaceOff = "the race detector was off, so this case could not see a data race; it needs cgo and a C compiler (apt-get install gcc), then check again"

// TamperedProblem starts the problem line of a void run.
const TamperedProblem = "output tampered with"

// Finalize computes the report's score and verdict from its cases' statuses
// and the run's facts, and is the only place a score is computed: check,
// watch, grade, verify and the class outputs all read what it sets. In
// order, it applies these rules:
//
//   - a run whose output was tampered with (Tampered) is void: no case
//     earns anything, and its passes are failures;
//   - without the race detector (Race false), a passing case that needs it
//     (rubric.Case.Race) is StatusInconclusive ("not exercised") and earns
//     nothing, because its pass proves nothing without the detector;
//   - a case earns its points exactly when its status is StatusPass;
//   - the run passed when it built, every case passed, no limit stopped
//     it, nothing was tampered with and nothing went wrong outside the
//     cases;
//   - the lab is not started (NotStarted) when it built, scored 0 and
//     every case failed with the starter's "not implemented" error.
//
// Finalize may be called again; it gives the same result.
func (r *Report) Finalize(lab Lab) {
	needs := map[string]bool{}
	for _, c := range lab.Cases {
		needs[c.Name] = c.Race
	}
	r.score = 0
	for i := range r.Cases {
		c := &r.Cases[i]
		switch {
		case c.Status != StatusPass:
		case r.Tampered != "":
			c.Status, c.Output = StatusFail, []string{TamperedProblem + ": the run is void"}
		case !r.Race && needs[c.Name]:
			c.Status, c.Output = StatusInconclusive, []string{RaceOff}
		}
		c.Earned = 0
		if c.Status == StatusPass {
			c.Earned = c.Points
		}
		r.score += c.Earned
	}
	if !r.finalized {
		var first []string
		if r.Tampered != "" {
			first = append(first, TamperedProblem+": "+r.Tampered+"; the run is void and scores 0")
		}
		if r.Limit != "" {
			first = append(first, "the run hit its "+r.Limit+" limit and was stopped")
		}
		r.Problems = append(first, r.Problems...)
	}
	r.finalized = true
	r.Passed = r.Build == nil && r.Tampered == "" && r.Limit == "" && !r.Unclean &&
		r.score == r.Total && len(r.Failed()) == 0
	failed := r.Failed()
	r.NotStarted = r.Build == nil && r.Tampered == "" && r.score == 0 && len(r.Cases) > 0 &&
		len(failed) == len(r.Cases) && allMention(failed, NotImplementedWords)
	// A run that fails every case (a lab not started, a constructor
	// that panics) has no signature to tell one bug from another: no
	// diagnosis.
	r.Diagnosis = nil
	if !r.Passed && r.Build == nil && r.Tampered == "" && len(r.Failed()) < len(r.Cases) {
		order := make([]string, len(r.Cases))
		failing := map[string]string{}
		for i, c := range r.Cases {
			order[i] = c.Name
			if diagnosis.Counts(string(c.Status)) {
				failing[c.Name] = string(c.Status)
			}
		}
		if m, ok := diagnosis.Diagnose(lab.Signatures, order, failing); ok {
			r.Diagnosis = &m
		}
	}
}

// Explained reports whether the run's diagnosis accounts for case c's
// failure, so that the case's own misconception need not be shown. A
// diagnosis the cases cannot tell from another mistake's explains
// nothing alone: each case keeps its own misconception then.
func (r *Report) Explained(c CaseResult) bool {
	return r.Diagnosis != nil && len(r.Diagnosis.Also) == 0 && slices.Contains(r.Diagnosis.Shared, c.Name)
}

// ShowsMisconception reports whether a case in this status is a failure of
// the code that a misconception can explain: not a case that could not
// exercise its property or never ran, and not a timeout or crash, which
// say where the code stopped rather than what it believes.
func ShowsMisconception(s Status) bool {
	switch s {
	case StatusInconclusive, StatusNotRun, StatusTimeout, StatusCrash, StatusNoFinish, StatusPass, StatusSkip:
		return false
	}
	return true
}

// Frame is where one goroutine of the code under test was when its case was
// stopped or crashed: the innermost frame of its stack in the lab's own
// (non-test) files, and the goroutine's state.
type Frame struct {
	File  string `json:"file"`  // the file's name in the lab, "claim.go"
	Line  int    `json:"line"`  // the line in that file
	Func  string `json:"func"`  // the function, without its package: "Store.Do", "Store.Do.func1"
	State string `json:"state"` // the goroutine's state: "sync.Mutex.Lock", "chan receive", "running"
}

// Spinning reports whether the goroutine was computing (running or
// runnable) rather than waiting for something.
func (f Frame) Spinning() bool {
	return f.State == "running" || f.State == "runnable" || f.State == "preempted"
}

// String says what the goroutine was doing and where: "blocked in
// sync.Mutex.Lock at claim.go:42 (Store.Do)" or "spinning (running) at
// claim.go:20 (Store.Do)".
func (f Frame) String() string {
	what := "blocked in " + f.State
	if f.Spinning() {
		what = "spinning (" + f.State + ")"
	}
	return fmt.Sprintf("%s at %s:%d (%s)", what, f.File, f.Line, f.Func)
}

// allMention reports whether every case's output contains one of words.
func allMention(cases []CaseResult, words []string) bool {
	for _, c := range cases {
		text := strings.ToLower(strings.Join(c.Output, "\n"))
		found := false
		for _, w := range words {
			if strings.Contains(text, w) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(cases) > 0
}
