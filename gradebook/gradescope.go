package gradebook

import (
	"fmt"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
)

// GradescopeResults is Gradescope's autograder results.json format.
type GradescopeResults struct {
	Score            float64          `json:"score"`
	ExecutionTime    int              `json:"execution_time"` // seconds
	Output           string           `json:"output"`
	OutputFormat     string           `json:"output_format"`
	TestOutputFormat string           `json:"test_output_format"`
	Visibility       string           `json:"visibility"`
	Tests            []GradescopeTest `json:"tests"`
}

// GradescopeTest is one case in GradescopeResults.
type GradescopeTest struct {
	Name       string  `json:"name"`
	Score      float64 `json:"score"`
	MaxScore   float64 `json:"max_score"`
	Status     string  `json:"status"`
	Output     string  `json:"output,omitempty"`
	Visibility string  `json:"visibility"`
}

// Gradescope converts a student's results to Gradescope's format, with md
// (the feedback) as the overall output. Each case's points are multiplied
// by its lab's weight; the execution time is the sum of the runs'. The
// output of a failing case is Markdown (test_output_format md) in which
// what the student's code printed sits in a fenced code block (see
// caseOutput), so it cannot render as a heading, a table, HTML or a score.
func Gradescope(s Student, o Options, md string) GradescopeResults {
	g := GradescopeResults{Output: md, OutputFormat: "md", TestOutputFormat: "md", Visibility: "visible", Tests: []GradescopeTest{}}
	var took time.Duration
	multi := len(s.Labs) > 1
	for _, r := range s.Labs {
		w := o.weight(r.Lab.Number)
		name := func(c string) string {
			if multi {
				return fmt.Sprintf("lab %02d · %s", r.Lab.Number, c)
			}
			return c
		}
		if r.Report == nil {
			why := "No files for this lab."
			if r.Err != nil {
				why = "Not graded: " + feedback.EscapeInline(o.scrub(r.Err.Error()))
			}
			for _, c := range r.Lab.Cases {
				g.Tests = append(g.Tests, GradescopeTest{Name: name(c.Name), MaxScore: float64(c.Points) * w, Status: "failed", Output: why, Visibility: "visible"})
			}
			continue
		}
		took += r.Report.Duration
		for _, c := range r.Report.Cases {
			t := GradescopeTest{Name: name(c.Name), Score: float64(c.Earned) * w, MaxScore: float64(c.Points) * w, Status: "passed", Visibility: "visible"}
			if c.Status != grader.StatusPass {
				t.Status = "failed"
				t.Output = caseOutput(c, o)
			}
			g.Score += t.Score
			g.Tests = append(g.Tests, t)
		}
	}
	g.ExecutionTime = int(took.Round(time.Second) / time.Second)
	return g
}

// caseOutput is a failing case's panel: its status and why the case
// matters (the kit's words), then what the code printed, scrubbed and
// fenced.
func caseOutput(c grader.CaseResult, o Options) string {
	out := fmt.Sprintf("**%s**: %s\n", c.Status, c.Explanation)
	if len(c.Output) > 0 {
		out += "\n" + feedback.Fence(strings.Split(o.scrub(strings.Join(c.Output, "\n")), "\n"))
	}
	return strings.TrimRight(out, "\n")
}

// GradescopeFailure is the results.json of a submission that could not be
// graded at all: score 0, no tests, and the reason, fenced.
func GradescopeFailure(reason string) GradescopeResults {
	return GradescopeResults{
		Output:       "# Not graded\n\nThe autograder could not grade this submission:\n\n" + feedback.Fence(strings.Split(reason, "\n")),
		OutputFormat: "md", TestOutputFormat: "md", Visibility: "visible", Tests: []GradescopeTest{},
	}
}

// ClassroomReport is the result GitHub Classroom's autograding reporter
// (classroom-resources/autograding-grading-reporter) reads from a runner's
// step output, base64-encoded.
type ClassroomReport struct {
	Version  int             `json:"version"`
	Status   string          `json:"status"` // pass or fail
	MaxScore float64         `json:"max_score"`
	Tests    []ClassroomTest `json:"tests"`
}

// ClassroomTest is one case in ClassroomReport.
type ClassroomTest struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"` // pass or fail
	Message string  `json:"message"`
	Score   float64 `json:"score"`
}

// Score is the points earned over every test.
func (c ClassroomReport) Score() float64 {
	var sum float64
	for _, t := range c.Tests {
		sum += t.Score
	}
	return sum
}

// Points is "earned/max", as the Points line prints it.
func (c ClassroomReport) Points() string { return num(c.Score()) + "/" + num(c.MaxScore) }

// Classroom converts a student's results to GitHub Classroom's format: the
// same cases, points and messages as Gradescope's.
func Classroom(s Student, o Options) ClassroomReport {
	return classroomOf(Gradescope(s, o, ""))
}

func classroomOf(g GradescopeResults) ClassroomReport {
	c := ClassroomReport{Version: 1, Tests: []ClassroomTest{}}
	for _, t := range g.Tests {
		status := "fail"
		if t.Status == "passed" {
			status = "pass"
		}
		c.MaxScore += t.MaxScore
		c.Tests = append(c.Tests, ClassroomTest{Name: t.Name, Status: status, Message: t.Output, Score: t.Score})
	}
	c.Status = "fail"
	if c.MaxScore > 0 && c.Score() == c.MaxScore {
		c.Status = "pass"
	}
	return c
}

// ClassroomSummary is the job summary of a Classroom run: the points, a
// table of the cases, then the feedback md.
func ClassroomSummary(s Student, o Options, md string) string {
	g := Gradescope(s, o, "")
	c := classroomOf(g)
	var b strings.Builder
	fmt.Fprintf(&b, "## Points %s\n\n| test | points | status |\n| --- | ---: | --- |\n", c.Points())
	for _, t := range g.Tests {
		fmt.Fprintf(&b, "| %s | %s/%s | %s |\n", mdCell(t.Name), num(t.Score), num(t.MaxScore), t.Status)
	}
	b.WriteString("\n" + md + "\n")
	return b.String()
}
