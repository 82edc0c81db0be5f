package formats_test

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
)

// testLab is a lab of three cases, one of which only the race detector can
// judge.
func testLab() grader.Lab {
	return grader.Lab{
		Lab: rubric.Lab{Number: 4, Slug: "retry", Title: "Retries", TestName: "TestRetry", Cases: []rubric.Case{
			{Name: "first_case", Concept: "c", Rules: []string{"R1"}, Points: 50, Explanation: "The first."},
			{Name: "second_case", Concept: "c", Rules: []string{"R2"}, Points: 30, Explanation: "The second."},
			{Name: "racy_case", Concept: "c", Rules: []string{"R3"}, Points: 20, Explanation: "The third.", Race: true},
		}},
		Dir: "04-retry",
	}
}

// finalized returns a report of testLab whose cases ended with statuses,
// finalized with the race detector set to race.
func finalized(t *testing.T, race bool, statuses ...grader.Status) (*grader.Report, grader.Lab) {
	t.Helper()
	lab := testLab()
	rep := &grader.Report{Lab: lab.Number, Slug: lab.Slug, Title: lab.Title, Target: "labs/04-retry", Total: lab.TotalPoints(), Race: race}
	for i, c := range lab.Cases {
		rep.Cases = append(rep.Cases, grader.CaseResult{Name: c.Name, Concept: c.Concept, Points: c.Points, Status: statuses[i], Explanation: c.Explanation})
	}
	rep.Finalize(lab)
	return rep, lab
}

// scores reads the score each format printed for in.
func scores(t *testing.T, in formats.Input) map[string]float64 {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	in.Getenv = func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return out
		}
		return ""
	}
	got := map[string]float64{}
	for _, f := range formats.All() {
		var b bytes.Buffer
		if err := f.Render(&b, in); err != nil {
			t.Fatalf("%s: Render = %v, want nil", f.Name, err)
		}
		text := b.String()
		switch f.Name {
		case "term", "md":
			m := regexp.MustCompile(`(\d+)/100`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("%s: no score N/100 in:\n%s", f.Name, text)
			}
			got[f.Name], _ = strconv.ParseFloat(m[1], 64)
		case "json":
			// The learner's is one lab's report; the instructor's is
			// report.json, a report per lab.
			var r struct {
				Version int     `json:"version"`
				Score   float64 `json:"score"`
				Labs    []struct {
					Report struct {
						Score float64 `json:"score"`
					} `json:"report"`
				} `json:"labs"`
			}
			if err := json.Unmarshal(b.Bytes(), &r); err != nil {
				t.Fatalf("json: %v:\n%s", err, text)
			}
			if r.Version != grader.ReportVersion {
				t.Errorf("json: version = %d, want %d", r.Version, grader.ReportVersion)
			}
			got[f.Name] = r.Score
			if !in.Learner {
				if len(r.Labs) != 1 {
					t.Fatalf("json: %d labs, want 1:\n%s", len(r.Labs), text)
				}
				got[f.Name] = r.Labs[0].Report.Score
			}
		case "gradescope":
			var g gradebook.GradescopeResults
			if err := json.Unmarshal(b.Bytes(), &g); err != nil {
				t.Fatalf("gradescope: %v:\n%s", err, text)
			}
			got[f.Name] = g.Score
		case "classroom":
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("classroom wrote no step output: %v", err)
			}
			enc, _ := strings.CutPrefix(strings.TrimSpace(string(raw)), "result=")
			dec, _ := base64.StdEncoding.DecodeString(enc)
			var c gradebook.ClassroomReport
			if err := json.Unmarshal(dec, &c); err != nil {
				t.Fatalf("classroom step output %q: %v", raw, err)
			}
			if want := "Points " + c.Points() + "\n"; text != want {
				t.Errorf("classroom printed %q, want %q", text, want)
			}
			got[f.Name] = c.Score()
		case "csv":
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("csv: %d rows (%v), want a header and one row:\n%s", len(rows), err, text)
			}
			col := slices.Index(rows[0], gradebook.LabColumn(testLab()))
			if col < 0 {
				t.Fatalf("csv: no column %q in %q", gradebook.LabColumn(testLab()), rows[0])
			}
			got[f.Name], _ = strconv.ParseFloat(rows[1][col], 64)
		default:
			t.Fatalf("format %q has no reader in this test: add one", f.Name)
		}
	}
	return got
}

// TestEveryFormatPrintsFinalizesScore renders one finalized report in every
// format, as the learner and as the instructor sees it, and reads the score
// back: each is the one Finalize computed, with the race detector on and
// off (when the race-only case is "not exercised" and earns nothing).
func TestEveryFormatPrintsFinalizesScore(t *testing.T) {
	for _, tt := range []struct {
		name     string
		race     bool
		statuses []grader.Status
		want     float64
	}{
		{"one fails", true, []grader.Status{grader.StatusPass, grader.StatusFail, grader.StatusPass}, 70},
		{"all pass", true, []grader.Status{grader.StatusPass, grader.StatusPass, grader.StatusPass}, 100},
		{"race off", false, []grader.Status{grader.StatusPass, grader.StatusPass, grader.StatusPass}, 80},
		{"timeout", true, []grader.Status{grader.StatusTimeout, grader.StatusPass, grader.StatusPass}, 50},
	} {
		for _, learner := range []bool{true, false} {
			t.Run(tt.name+"/learner="+strconv.FormatBool(learner), func(t *testing.T) {
				rep, lab := finalized(t, tt.race, tt.statuses...)
				if float64(rep.Score()) != tt.want {
					t.Fatalf("Finalize: Score = %d, want %v", rep.Score(), tt.want)
				}
				in := formats.Input{
					Student: gradebook.Student{Name: "ada", Labs: []gradebook.Result{{Student: "ada", Lab: lab, Report: rep}}},
					Class:   gradebook.Options{Labs: []grader.Lab{lab}},
					Learner: learner,
				}
				for name, got := range scores(t, in) {
					if got != tt.want {
						t.Errorf("%s printed score %v, want %v (Finalize's)", name, got, tt.want)
					}
				}
			})
		}
	}
}

func TestLookup(t *testing.T) {
	names := formats.Names()
	for _, want := range []string{"md", "term", "json", "gradescope", "classroom", "csv"} {
		f, err := formats.Lookup(want)
		if err != nil || f.Name != want || f.Doc == "" || f.Render == nil {
			t.Errorf("Lookup(%q) = %q, %v; want the format, documented", want, f.Name, err)
		}
	}
	if len(names) != 6 {
		t.Errorf("Names() = %q, want the six formats", names)
	}
	_, err := formats.Lookup("xml")
	if !errors.Is(err, formats.ErrUnknown) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("Lookup(\"xml\") = %v, want ErrUnknown listing %q", err, names)
	}
}

// TestFormatsScrub checks that no format lets a path the class options
// scrub reach its output.
func TestFormatsScrub(t *testing.T) {
	rep, lab := finalized(t, true, grader.StatusFail, grader.StatusPass, grader.StatusPass)
	secret := filepath.Join(t.TempDir(), "kit")
	rep.Cases[0].Output = []string{"open " + filepath.Join(secret, "labs", "04-retry", "retry.go") + ": boom"}
	in := formats.Input{
		Student: gradebook.Student{Name: "ada", Labs: []gradebook.Result{{Student: "ada", Lab: lab, Report: rep}}},
		Class:   gradebook.Options{Labs: []grader.Lab{lab}, Scrub: []string{secret}},
		Getenv:  func(string) string { return "" },
	}
	for _, f := range formats.All() {
		var b bytes.Buffer
		if err := f.Render(&b, in); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if strings.Contains(b.String(), secret) {
			t.Errorf("%s printed the scrubbed path %s:\n%s", f.Name, secret, b.String())
		}
	}
}

// TestCSVIsSafe checks that the csv format neutralises a student name
// that a spreadsheet would run as a formula.
func TestCSVIsSafe(t *testing.T) {
	rep, lab := finalized(t, true, grader.StatusPass, grader.StatusPass, grader.StatusPass)
	in := formats.Input{
		Student: gradebook.Student{Name: "=HYPERLINK(\"x\")", Labs: []gradebook.Result{{Lab: lab, Report: rep}}},
		Class:   gradebook.Options{Labs: []grader.Lab{lab}},
	}
	f, _ := formats.Lookup("csv")
	var b bytes.Buffer
	if err := f.Render(&b, in); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][0] != "'=HYPERLINK(\"x\")" {
		t.Errorf("csv rows = %q (%v), want the name with a leading quote", rows, err)
	}
}
