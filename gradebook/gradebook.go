// Package gradebook writes what grading a class produces: for each student,
// feedback.md, feedback.html, report.json and Gradescope's results.json; for
// the class, gradebook.csv and summary.md. It only writes; the grader runs
// the suites.
package gradebook

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/render"
)

// Result is one student's submission after grading: the report, or the
// reason it could not be graded.
type Result struct {
	Student string
	Report  *grader.Report // nil when Err is set
	Err     error          // why the submission could not be graded
}

// Verdict is the result in a few words: "87/100", "0/100 (does not
// compile)", "not graded: ...".
func (r Result) Verdict() string {
	switch {
	case r.Err != nil:
		return "not graded: " + r.Err.Error()
	case r.Report.Build != nil:
		return fmt.Sprintf("%d/%d (does not compile)", r.Report.Score, r.Report.Total)
	case len(r.Report.Problems) > 0:
		first, _, _ := strings.Cut(r.Report.Problems[0], "\n")
		return fmt.Sprintf("%d/%d (%s)", r.Report.Score, r.Report.Total, first)
	default:
		return fmt.Sprintf("%d/%d", r.Report.Score, r.Report.Total)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._@-]+`)

// Dir is the output folder name for a student: the name itself when it is
// safe, otherwise a cleaned name plus a hash of the original, so two names
// that clean up alike ("a b", "a_b") never overwrite each other.
func Dir(student string) string {
	clean := unsafeName.ReplaceAllString(student, "_")
	if clean == student && clean != "." && clean != ".." {
		return student
	}
	h := fnv.New32a()
	h.Write([]byte(student))
	return fmt.Sprintf("%s-%08x", clean, h.Sum32())
}

// WriteStudent writes the student's feedback.md, feedback.html,
// results.json and (when graded) report.json into out/Dir(student).
func WriteStudent(out string, lab grader.Lab, r Result) error {
	dir := filepath.Join(out, Dir(r.Student))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md string
	if r.Err != nil {
		md = fmt.Sprintf("# Lab %02d · %s: not graded\n\nThe submission could not be graded: %s\n", lab.Number, lab.Title, r.Err)
	} else {
		md = grader.Markdown(r.Report, lab, grader.MarkdownOptions{Instructor: true})
	}
	page, err := render.Page(fmt.Sprintf("Lab %02d feedback: %s", lab.Number, r.Student), md)
	if err != nil {
		return err
	}
	files := map[string][]byte{"feedback.md": []byte(md), "feedback.html": page}
	if r.Report != nil {
		rj, _ := json.MarshalIndent(r.Report, "", "  ")
		files["report.json"] = rj
	}
	gs, _ := json.MarshalIndent(Gradescope(lab, r, md), "", "  ")
	files["results.json"] = gs
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GradescopeResults is Gradescope's autograder results.json format.
type GradescopeResults struct {
	Score  int              `json:"score"`
	Output string           `json:"output"`
	Tests  []GradescopeTest `json:"tests"`
}

// GradescopeTest is one case in GradescopeResults.
type GradescopeTest struct {
	Name     string `json:"name"`
	Score    int    `json:"score"`
	MaxScore int    `json:"max_score"`
	Status   string `json:"status"`
	Output   string `json:"output,omitempty"`
}

// Gradescope converts a result to Gradescope's format, with md (the
// feedback) as the overall output.
func Gradescope(lab grader.Lab, r Result, md string) GradescopeResults {
	g := GradescopeResults{Output: md}
	if r.Report == nil {
		for _, c := range lab.Cases {
			g.Tests = append(g.Tests, GradescopeTest{Name: c.Name, MaxScore: c.Points, Status: "failed", Output: "not graded: " + r.Err.Error()})
		}
		return g
	}
	g.Score = r.Report.Score
	for _, c := range r.Report.Cases {
		t := GradescopeTest{Name: c.Name, Score: c.Earned, MaxScore: c.Points, Status: "passed"}
		if c.Status != grader.StatusPass {
			t.Status = "failed"
			t.Output = fmt.Sprintf("%s: %s\n%s", c.Status, c.Explanation, strings.Join(c.Output, "\n"))
		}
		g.Tests = append(g.Tests, t)
	}
	return g
}

// WriteClass writes out/gradebook.csv (a row per student: score, total,
// passed, verdict, and each case's status) and out/summary.md (scores, and
// the cases most often failed with their concepts).
func WriteClass(out string, lab grader.Lab, results []Result) error {
	f, err := os.Create(filepath.Join(out, "gradebook.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := []string{"student", "score", "total", "passed", "status"}
	for _, c := range lab.Cases {
		header = append(header, c.Name)
	}
	w.Write(header)
	var summary strings.Builder
	fmt.Fprintf(&summary, "# Lab %02d · %s: class summary\n\n| student | score | status |\n| --- | --- | --- |\n", lab.Number, lab.Title)
	failing := map[string]int{}
	for _, r := range results {
		row := []string{r.Student}
		if r.Report == nil {
			row = append(row, "0", fmt.Sprint(lab.TotalPoints()), "false", r.Verdict())
			for range lab.Cases {
				row = append(row, "")
			}
		} else {
			row = append(row, fmt.Sprint(r.Report.Score), fmt.Sprint(r.Report.Total), fmt.Sprint(r.Report.Passed), r.Verdict())
			for _, c := range r.Report.Cases {
				row = append(row, string(c.Status))
				if c.Status != grader.StatusPass {
					failing[c.Name]++
				}
			}
		}
		w.Write(row)
		fmt.Fprintf(&summary, "| %s | %s | %s |\n", r.Student, strings.SplitN(r.Verdict(), " ", 2)[0], r.Verdict())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	summary.WriteString("\n## Cases most often failed\n\n")
	for _, c := range lab.Cases {
		if n := failing[c.Name]; n > 0 {
			fmt.Fprintf(&summary, "- `%s`: %d of %d submissions (%s)\n", c.Name, n, len(results), lab.Concept(c.Concept).Title)
		}
	}
	return os.WriteFile(filepath.Join(out, "summary.md"), []byte(summary.String()), 0o644)
}
