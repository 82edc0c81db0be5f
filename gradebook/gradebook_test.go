package gradebook

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
)

var lab = grader.Lab{Dir: "01-demo", Lab: rubric.Lab{Number: 1, Slug: "demo", Title: "Demo", TestName: "TestDemo",
	Concepts: []rubric.Concept{{ID: "c", Title: "The concept", Misconception: "m", Hint: "h", Docs: "docs/01-demo.md#c"}},
	Cases: []rubric.Case{
		{Name: "first", Concept: "c", Points: 40, Explanation: "E1"},
		{Name: "second", Concept: "c", Points: 60, Explanation: "E2"},
	},
}}

func report(secondStatus grader.Status) *grader.Report {
	r := &grader.Report{Lab: 1, Slug: "demo", Title: "Demo", Total: 100, Cases: []grader.CaseResult{
		{Name: "first", Concept: "c", Points: 40, Earned: 40, Status: grader.StatusPass, Explanation: "E1"},
		{Name: "second", Concept: "c", Points: 60, Status: secondStatus, Explanation: "E2", Output: []string{"work ran 2 times"}},
	}}
	if secondStatus == grader.StatusPass {
		r.Cases[1].Earned = 60
	}
	for _, c := range r.Cases {
		r.Score += c.Earned
	}
	r.Passed = r.Score == r.Total
	return r
}

func TestDirNeverCollides(t *testing.T) {
	if got := Dir("alice"); got != "alice" {
		t.Errorf(`Dir("alice") = %q, want "alice"`, got)
	}
	if a, b := Dir("a b"), Dir("a_b"); a == b {
		t.Errorf(`Dir("a b") = Dir("a_b") = %q, want different folders`, a)
	}
	for _, name := range []string{"../x y", "..", ".", "a/b"} {
		if d := Dir(name); strings.ContainsAny(d, "/ ") || d == ".." || d == "." {
			t.Errorf("Dir(%q) = %q, want one safe folder name", name, d)
		}
	}
}

func TestGradescope(t *testing.T) {
	got := Gradescope(lab, Result{Student: "s", Report: report(grader.StatusFail)}, "feedback")
	want := GradescopeResults{Score: 40, Output: "feedback", Tests: []GradescopeTest{
		{Name: "first", Score: 40, MaxScore: 40, Status: "passed"},
		{Name: "second", Score: 0, MaxScore: 60, Status: "failed", Output: "fail: E2\nwork ran 2 times"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Gradescope(failing report) mismatch (-want +got):\n%s", diff)
	}
	ungraded := Gradescope(lab, Result{Student: "s", Err: errors.New("no Go files")}, "x")
	if ungraded.Score != 0 || len(ungraded.Tests) != 2 || ungraded.Tests[1].MaxScore != 60 || !strings.Contains(ungraded.Tests[0].Output, "no Go files") {
		t.Errorf("Gradescope(ungraded) = %+v, want every case failed at 0 with the reason", ungraded)
	}
}

func TestWriteStudentAndClass(t *testing.T) {
	out := t.TempDir()
	results := []Result{
		{Student: "ada", Report: report(grader.StatusPass)},
		{Student: "bob smith", Report: report(grader.StatusTimeout)},
		{Student: "cy", Err: errors.New("no Go source files found")},
	}
	for _, r := range results {
		if err := WriteStudent(out, lab, r); err != nil {
			t.Fatalf("WriteStudent(%s) = %v", r.Student, err)
		}
	}
	if err := WriteClass(out, lab, results); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, f := range []string{"feedback.md", "feedback.html", "results.json"} {
			if _, err := os.Stat(filepath.Join(out, Dir(r.Student), f)); err != nil {
				t.Errorf("%s: %v", r.Student, err)
			}
		}
		_, err := os.Stat(filepath.Join(out, Dir(r.Student), "report.json"))
		if graded := r.Err == nil; graded != (err == nil) {
			t.Errorf("%s: report.json present = %v, want %v", r.Student, err == nil, graded)
		}
	}
	var gs GradescopeResults
	data, _ := os.ReadFile(filepath.Join(out, "ada", "results.json"))
	if err := json.Unmarshal(data, &gs); err != nil || gs.Score != 100 {
		t.Errorf("ada/results.json = %+v, %v; want score 100", gs, err)
	}

	f, err := os.Open(filepath.Join(out, "gradebook.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"student", "score", "total", "passed", "status", "first", "second"},
		{"ada", "100", "100", "true", "100/100", "pass", "pass"},
		{"bob smith", "40", "100", "false", "40/100", "pass", "timeout"},
		{"cy", "0", "100", "false", "not graded: no Go source files found", "", ""},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("gradebook.csv mismatch (-want +got):\n%s", diff)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if !strings.Contains(string(summary), "- `second`: 1 of 3 submissions (The concept)") {
		t.Errorf("summary.md does not list the failed case with its concept:\n%s", summary)
	}
}
