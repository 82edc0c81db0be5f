package report

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/rubric"
)

var finalizeLab = Lab{Lab: rubric.Lab{Cases: []rubric.Case{
	{Name: "plain", Points: 40},
	{Name: "racy", Points: 60, Race: true},
}}}

// allPassed is a report of finalizeLab whose cases both passed, before
// Finalize: no points yet.
func allPassed(race bool) *Report {
	return &Report{Race: race, Total: 100, Cases: []CaseResult{
		{Name: "plain", Points: 40, Status: StatusPass},
		{Name: "racy", Points: 60, Status: StatusPass},
	}}
}

func TestFinalizeWithoutTheRaceDetector(t *testing.T) {
	off := allPassed(false)
	off.Finalize(finalizeLab)
	want := []CaseResult{
		{Name: "plain", Points: 40, Earned: 40, Status: StatusPass},
		{Name: "racy", Points: 60, Earned: 0, Status: StatusInconclusive, Output: []string{RaceOff}},
	}
	if diff := cmp.Diff(want, off.Cases); diff != "" {
		t.Errorf("cases after Finalize without the detector (-want +got):\n%s", diff)
	}
	if off.Score() != 40 || off.Passed {
		t.Errorf("Finalize without the detector: score %d, passed %v; want 40, false", off.Score(), off.Passed)
	}
	on := allPassed(true)
	on.Finalize(finalizeLab)
	if on.Score() != 100 || !on.Passed {
		t.Errorf("Finalize with the detector: score %d, passed %v; want 100, true", on.Score(), on.Passed)
	}
}

// TestFinalizeVoidsATamperedRun: any tampering scores the run 0, whatever
// its cases say, with the reason first among its problems.
func TestFinalizeVoidsATamperedRun(t *testing.T) {
	rep := allPassed(true)
	rep.Tampered = "a line carries an attestation the suite did not sign"
	rep.Finalize(finalizeLab)
	rep.Finalize(finalizeLab) // a second call changes nothing
	if rep.Score() != 0 || rep.Passed {
		t.Errorf("tampered run: score %d, passed %v; want 0, false", rep.Score(), rep.Passed)
	}
	for _, c := range rep.Cases {
		if c.Status != StatusFail || c.Earned != 0 {
			t.Errorf("tampered run: case %s = %s (%d points), want fail with 0", c.Name, c.Status, c.Earned)
		}
	}
	if len(rep.Problems) != 1 || !strings.HasPrefix(rep.Problems[0], TamperedProblem+": ") {
		t.Errorf("tampered run: problems %q, want one starting %q", rep.Problems, TamperedProblem)
	}
}

// TestFinalizeLimitFailsTheRun: a run a limit stopped has not passed, even
// when every case it reached did.
func TestFinalizeLimitFailsTheRun(t *testing.T) {
	rep := allPassed(true)
	rep.Limit = "memory (2048 MiB)"
	rep.Finalize(finalizeLab)
	if rep.Score() != 100 || rep.Passed {
		t.Errorf("limit hit: score %d, passed %v; want 100, false", rep.Score(), rep.Passed)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "memory (2048 MiB) limit") {
		t.Errorf("limit hit: problems %q, want the limit named", rep.Problems)
	}
}

// TestFinalizeEarnsOnlyPasses: points come from statuses alone, whatever
// Earned said before.
func TestFinalizeEarnsOnlyPasses(t *testing.T) {
	rep := &Report{Race: true, Total: 100, score: 100, Cases: []CaseResult{
		{Name: "plain", Points: 40, Earned: 40, Status: StatusInconclusive},
		{Name: "racy", Points: 60, Earned: 60, Status: StatusRace},
	}}
	rep.Finalize(finalizeLab)
	if rep.Score() != 0 || rep.Passed || rep.Cases[0].Earned != 0 || rep.Cases[1].Earned != 0 {
		t.Errorf("no passes: score %d, passed %v, earned %d and %d; want all 0", rep.Score(), rep.Passed, rep.Cases[0].Earned, rep.Cases[1].Earned)
	}
}

// TestFinalizeNotStarted: a lab is not started when every case failed
// with the starter's error, and only then; markdown, term and verify read
// what Finalize decided.
func TestFinalizeNotStarted(t *testing.T) {
	starter := "claim: not implemented yet (TODO in labs/01-claim/claim.go)"
	for _, tt := range []struct {
		name  string
		cases []CaseResult
		build bool
		want  bool
	}{
		{"every case the starter's", []CaseResult{{Name: "plain", Status: StatusFail, Output: []string{starter}}, {Name: "racy", Status: StatusFail, Output: []string{"Do() = " + starter}}}, false, true},
		{"one case passes", []CaseResult{{Name: "plain", Status: StatusPass}, {Name: "racy", Status: StatusFail, Output: []string{starter}}}, false, false},
		{"one failure of its own", []CaseResult{{Name: "plain", Status: StatusFail, Output: []string{starter}}, {Name: "racy", Status: StatusFail, Output: []string{"Claim(k) = true, want false"}}}, false, false},
		{"a crash", []CaseResult{{Name: "plain", Status: StatusCrash, Output: []string{"panic: " + starter}}, {Name: "racy", Status: StatusFail, Output: []string{starter}}}, false, true},
		{"does not compile", []CaseResult{{Name: "plain", Status: StatusNotRun}, {Name: "racy", Status: StatusNotRun}}, true, false},
	} {
		rep := &Report{Race: true, Total: 100, Cases: tt.cases}
		for i := range rep.Cases {
			rep.Cases[i].Points = finalizeLab.Cases[i].Points
		}
		if tt.build {
			rep.Build = &BuildFailure{Output: "claim.go:1: syntax error"}
		}
		rep.Finalize(finalizeLab)
		if rep.NotStarted != tt.want {
			t.Errorf("%s: NotStarted = %v, want %v", tt.name, rep.NotStarted, tt.want)
		}
	}
}

func TestFinalizeDiagnoses(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Cases: []rubric.Case{{Name: "a", Points: 50}, {Name: "b", Points: 25}, {Name: "c", Points: 25}}},
		Signatures: []diagnosis.Signature{{Mistake: "m", Summary: "s", Failing: map[string]string{"b": "fail"}}}}
	for _, tt := range []struct {
		name     string
		statuses []Status
		want     string
	}{
		{"the mistake's cases fail", []Status{StatusPass, StatusFail, StatusPass}, "m"},
		{"every case fails", []Status{StatusFail, StatusFail, StatusFail}, ""},
		{"only a timeout", []Status{StatusPass, StatusTimeout, StatusPass}, ""},
		{"a pass", []Status{StatusPass, StatusPass, StatusPass}, ""},
	} {
		rep := &Report{Race: true, Total: 100}
		for i, c := range lab.Cases {
			rep.Cases = append(rep.Cases, CaseResult{Name: c.Name, Points: c.Points, Status: tt.statuses[i]})
		}
		rep.Finalize(lab)
		got := ""
		if rep.Diagnosis != nil {
			got = rep.Diagnosis.Mistake
		}
		if got != tt.want {
			t.Errorf("%s: Diagnosis = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReportIsALeaf: the report imports no package of the kit but the
// rubric and the diagnosis tables, so everything that fills, scores,
// renders or stores a report can depend on it.
func TestReportIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	const kit = "github.com/fourth-outcome/labkit/"
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == kit+"report", pkg == kit+"rubric", pkg == kit+"diagnosis":
		case strings.HasPrefix(pkg, kit):
			t.Errorf("package report imports %s; it must stay a leaf (rubric and diagnosis only)", pkg)
		case strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
			t.Errorf("package report imports %s, outside the standard library", pkg)
		}
	}
}

// TestReportJSONRoundTrip: a finalized report written as JSON carries its
// version and score, and reads back with the same score, which nothing but
// Finalize (and this reading) can set.
func TestReportJSONRoundTrip(t *testing.T) {
	rep := allPassed(true)
	rep.Finalize(finalizeLab)
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	if fields["version"] != float64(ReportVersion) || fields["score"] != float64(100) {
		t.Errorf("json of a finalized report: version %v, score %v; want %d and 100", fields["version"], fields["score"], ReportVersion)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Score() != 100 || !back.Passed || len(back.Cases) != 2 {
		t.Errorf("report read back: score %d, passed %v, %d cases; want 100, true, 2", back.Score(), back.Passed, len(back.Cases))
	}
}
