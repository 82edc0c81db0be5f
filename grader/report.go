// Package grader runs a lab's pristine suite over an implementation (a
// student's directory, the reference solution, or a catalogued mistake) and
// turns the test2json stream into a Report, rendered as Markdown and HTML.
package grader

import (
	"slices"
	"time"

	"github.com/fourth-outcome/labkit/diagnosis"
)

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
	Score  int    `json:"score"`
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
	// unclean is set when the run itself went wrong beyond its cases (the
	// package failed with every case passing, a problem outside any
	// case): such a run does not count as passed.
	unclean bool
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
	r.Score = 0
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
		r.Score += c.Earned
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
	r.Passed = r.Build == nil && r.Tampered == "" && r.Limit == "" && !r.unclean &&
		r.Score == r.Total && len(r.Failed()) == 0
	failed := r.Failed()
	r.NotStarted = r.Build == nil && r.Tampered == "" && r.Score == 0 && len(r.Cases) > 0 &&
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
