package gradebook

import (
	"strconv"

	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/lateness"

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
	lab := grader.Lab{Lab: rubric.Lab{Number: 1}}
	for _, c := range r.Cases {
		lab.Cases = append(lab.Cases, rubric.Case{Name: c.Name, Concept: c.Concept, Points: c.Points})
	}
	r.Race = true
	r.Finalize(lab)
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
	lv := strconv.Itoa(changelog.Level())
	want := [][]string{
		{"student", "folder", "status", "lab 01 (100)", "total", "max", "id", "kit", "rules", "submitted", "days late", "penalty %", "final"},
		{"ada", "ada", "graded", "100", "100", "100", "", "abc123", lv, "", "0", "0", "100"},
		{"bob smith", Dir("bob smith"), "graded", "40", "40", "100", "", "abc123", lv, "", "0", "0", "40"},
		{"cy", "cy", "not graded: no Go files for any lab", "", "0", "0", "", "abc123", lv, "", "0", "0", "0"},
		{"di", "di", "graded", "40", "40", "100", "", "abc123", lv, "", "0", "0", "40"},
		{"ed", "ed", "graded", "0", "0", "100", "", "abc123", lv, "", "0", "0", "0"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("gradebook.csv mismatch (-want +got):\n%s", diff)
	}
	cases, _ := os.ReadFile(filepath.Join(out, "cases.csv"))
	if want := "student,folder,id,01 first,01 second\nada,ada,,pass,pass\n"; !strings.HasPrefix(string(cases), want) {
		t.Errorf("cases.csv starts %q, want %q", cases, want)
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

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1+cmd|' /C calc'!A0":     "'+1+cmd|' /C calc'!A0",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\tx":                      "'\tx",
		"\rx":                      "'\rx",
		"-1.5":                     "-1.5",
		"ada":                      "ada",
		"":                         "",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClassOperations writes a class of named submissions, one of them
// named as a formula, another graded late, and reads it back: every cell
// is neutralised, the maximum counts only the labs submitted, the late
// penalty is applied, near-identical code is listed for review, and
// LoadStudents gives back what WriteClass renders, byte for byte.
func TestClassOperations(t *testing.T) {
	out := t.TempDir()
	other := lab
	other.Number, other.Dir, other.Title = 2, "02-other", "Other"
	deadline := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	o := Options{Labs: []grader.Lab{lab, other}, Kit: "abc123", Late: lateness.Policy{Deadline: deadline, PerDay: 10, Cap: 30}}
	prints := map[int][]uint64{1: {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	students := []Student{
		{Name: "=cmd()", ID: "1001", Labs: []Result{{Lab: lab, Report: report(grader.StatusPass)}, {Lab: other, Missing: true}}, Prints: prints, Submitted: deadline},
		{Name: "late", ID: "1002", Labs: []Result{{Lab: lab, Report: report(grader.StatusPass)}, {Lab: other, Missing: true}}, Prints: prints, Submitted: deadline.Add(25 * time.Hour)},
		{Name: "own", Labs: []Result{{Lab: lab, Report: report(grader.StatusFail)}, {Lab: other, Missing: true}}, Prints: map[int][]uint64{1: {11, 12, 13, 14, 15, 16, 17, 18}}},
	}
	for _, s := range students {
		if err := WriteStudent(out, s, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteClass(out, students, o); err != nil {
		t.Fatal(err)
	}
	book := map[string][]string{}
	f, _ := os.ReadFile(filepath.Join(out, "gradebook.csv"))
	rows, err := csv.NewReader(strings.NewReader(string(f))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		book[r[0]] = r
	}
	if _, ok := book["'=cmd()"]; !ok {
		t.Errorf("gradebook.csv rows %v: want the formula name neutralised as '=cmd()", rows)
	}
	// columns: student folder status lab01 lab02 total max id kit rules submitted late penalty final
	if r := book["late"]; r[5] != "100" || r[6] != "100" || r[7] != "1002" || r[11] != "2" || r[12] != "20" || r[13] != "80" {
		t.Errorf("late's row = %v, want 100/100 (lab 02, which nobody submitted, not counted), ID 1002, 2 days late, 20%% off, 80", r)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, want := range []string{"## Late work", "| late | 2026-03-03T00:59:00Z |", "## Similar code, for a human to review", "| =cmd() | late | 100% |"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(string(summary), "| own |") && strings.Contains(string(summary), "own | 100%") {
		t.Errorf("summary.md pairs own, whose code is its own:\n%s", summary)
	}
	first := map[string][]byte{}
	for _, n := range []string{"gradebook.csv", "cases.csv", "summary.md"} {
		first[n], _ = os.ReadFile(filepath.Join(out, n))
	}
	loaded, err := LoadStudents(out, o.Labs)
	if err != nil || len(loaded) != 3 {
		t.Fatalf("LoadStudents = %d students, %v; want 3", len(loaded), err)
	}
	// LoadStudents sorts by name; so does the class test's order here.
	if err := WriteClass(out, loaded, o); err != nil {
		t.Fatal(err)
	}
	for n, want := range first {
		if got, _ := os.ReadFile(filepath.Join(out, n)); string(got) != string(want) {
			t.Errorf("%s from the loaded records differs:\n%s\nwant\n%s", n, got, want)
		}
	}
}
