package gradebook

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	st := Student{Name: "s", Labs: []Result{{Student: "s", Lab: lab, Report: report(grader.StatusFail)}}}
	st.Labs[0].Report.Duration = 1600 * time.Millisecond
	got := Gradescope(st, Options{Labs: []grader.Lab{lab}, Weights: map[int]float64{1: 0.5}}, "feedback")
	want := GradescopeResults{Score: 20, ExecutionTime: 2, Output: "feedback", OutputFormat: "md", TestOutputFormat: "md", Visibility: "visible", Tests: []GradescopeTest{
		{Name: "first", Score: 20, MaxScore: 20, Status: "passed", Visibility: "visible"},
		{Name: "second", Score: 0, MaxScore: 30, Status: "failed", Output: "**fail**: E2\n\n```text\nwork ran 2 times\n```", Visibility: "visible"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Gradescope(failing report) mismatch (-want +got):\n%s", diff)
	}
	ungraded := Gradescope(Student{Name: "s", Labs: []Result{{Lab: lab, Err: errors.New("no Go files")}}}, Options{}, "x")
	if ungraded.Score != 0 || len(ungraded.Tests) != 2 || ungraded.Tests[1].MaxScore != 60 || !strings.Contains(ungraded.Tests[0].Output, "no Go files") {
		t.Errorf("Gradescope(ungraded) = %+v, want every case failed at 0 with the reason", ungraded)
	}
}

func TestWriteStudentAndClass(t *testing.T) {
	out := t.TempDir()
	secret := "/home/instructor/kit"
	timeout := report(grader.StatusTimeout)
	timeout.Cases[1].Output = []string{"goroutine 42 [running]: at " + secret + "/labs/x.go (0.25s)"}
	crash := report(grader.StatusNoFinish)
	students := []Student{
		{Name: "ada", Labs: []Result{{Student: "ada", Lab: lab, Report: report(grader.StatusPass)}}},
		{Name: "bob smith", Labs: []Result{{Student: "bob smith", Lab: lab, Report: timeout}}},
		{Name: "cy", Err: errors.New("no Go files for any lab")},
		{Name: "di", Labs: []Result{{Student: "di", Lab: lab, Report: crash}}},
		{Name: "ed", Labs: []Result{{Student: "ed", Lab: lab, Missing: true}}},
	}
	o := Options{Labs: []grader.Lab{lab}, Kit: "abc123", DocsBase: "../docs/", Scrub: []string{secret}}
	write := func() map[string]string {
		for _, s := range students {
			if err := WriteStudent(out, s, o); err != nil {
				t.Fatalf("WriteStudent(%s) = %v", s.Name, err)
			}
		}
		if err := WriteClass(out, students, o); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, f := range []string{"gradebook.csv", "summary.md", "summary.html", "bob_smith-3ef2b0a1/feedback.md"} {
			data, _ := os.ReadFile(filepath.Join(out, f))
			files[f] = string(data)
		}
		return files
	}
	first := write()
	for _, s := range students {
		for _, f := range []string{"feedback.md", "feedback.html", "results.json", "report.json"} {
			data, err := os.ReadFile(filepath.Join(out, Dir(s.Name), f))
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
			if strings.Contains(string(data), secret) {
				t.Errorf("%s/%s shows the instructor's path %s", s.Name, f, secret)
			}
		}
	}
	fb, _ := os.ReadFile(filepath.Join(out, Dir("bob smith"), "feedback.md"))
	if strings.Contains(string(fb), "goroutine 42") || strings.Contains(string(fb), "0.25s") {
		t.Errorf("feedback.md keeps goroutine numbers or durations:\n%s", fb)
	}
	var gs GradescopeResults
	data, _ := os.ReadFile(filepath.Join(out, "ada", "results.json"))
	if err := json.Unmarshal(data, &gs); err != nil || gs.Score != 100 || gs.OutputFormat != "md" {
		t.Errorf("ada/results.json = %+v, %v; want score 100 in md", gs, err)
	}

	rows, err := csv.NewReader(strings.NewReader(first["gradebook.csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"student", "folder", "status", "lab 01", "total", "max", "01 first", "01 second"},
		{"ada", "ada", "graded", "100", "100", "100", "pass", "pass"},
		{"bob smith", Dir("bob smith"), "graded", "40", "40", "100", "pass", "timeout"},
		{"cy", "cy", "not graded: no Go files for any lab", "", "0", "0", "", ""},
		{"di", "di", "graded", "40", "40", "100", "pass", "did not finish"},
		{"ed", "ed", "graded", "0", "0", "100", "missing", "missing"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("gradebook.csv mismatch (-want +got):\n%s", diff)
	}
	summary := first["summary.md"]
	for _, want := range []string{
		"| `second` | 66% | 0 | 1 | 1 | 0 | 0 | [The concept](docs/01-demo.html#c) |",
		"| `first` | 0% |",
		"| cy | — | 0/0 | not graded",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	if strings.Index(summary, "`second`") > strings.Index(summary, "`first`") {
		t.Errorf("summary.md lists cases in suite order, want the most failed first:\n%s", summary)
	}
	if second := write(); !cmp.Equal(first, second) {
		t.Errorf("a second write differs: %s", cmp.Diff(first, second))
	}
}
