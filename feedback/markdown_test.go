package feedback

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/report"
	"github.com/fourth-outcome/labkit/rubric"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/feedback")

// goldenLab is a fixed rubric, so the golden files change only when the
// rendering does, not when a lab's wording is edited.
var goldenLab = report.Lab{Dir: "01-claim", NextLab: 2, Lab: rubric.Lab{Number: 1, Slug: "claim", Title: "Claim before you execute", TestName: "TestClaim",
	Concepts: []rubric.Concept{
		{ID: "atomic", Title: "The claim is one atomic step", Misconception: "Lookup then insert is a claim.", Hint: "Make the lookup and the insert one step.", Docs: "docs/01-claim.md#the-claim-is-one-atomic-step"},
		{ID: "stored", Title: "The result is stored", Misconception: "Keys can be forgotten.", Hint: "Keep the record.", Docs: "docs/01-claim.md#the-result-is-stored-and-replayed"},
	},
	Cases: []rubric.Case{
		{Name: "first_case", Concept: "stored", Points: 40, Explanation: "The first case's property."},
		{Name: "racing_case", Concept: "atomic", Points: 60, Explanation: "Twenty workers race; the work runs once."},
	},
}}

func fixtureReport(lab report.Lab) *report.Report {
	rep := &report.Report{Lab: lab.Number, Slug: lab.Slug, Title: lab.Title, Total: lab.TotalPoints(), Target: "labs/01-claim", Race: true, Seed: "42", Duration: 1500 * time.Millisecond}
	for i, c := range lab.Cases {
		cr := report.CaseResult{Name: c.Name, Concept: c.Concept, Points: c.Points, Explanation: c.Explanation}
		if i == 1 {
			cr.Status = report.StatusFail
			cr.Output = []string{`20 workers called Do("k1") while the first one was working: work ran 2 times, want 1`}
			cr.Timeline = []string{
				"t=0s  worker 00  work starts -> first execution",
				"t=0s  worker 01  work starts -> EXECUTION #2: the side effect happened again",
			}
		} else {
			cr.Status, cr.Earned = report.StatusPass, c.Points
		}
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Finalize(lab)
	return rep
}

func TestMarkdownGolden(t *testing.T) {
	lab := goldenLab
	failing := fixtureReport(lab)
	passing := fixtureReport(lab)
	passing.Cases[1].Status, passing.Cases[1].Earned = report.StatusPass, passing.Cases[1].Points
	passing.Finalize(lab)
	broken := &report.Report{Lab: 1, Slug: "claim", Title: lab.Title, Total: 100, Duration: time.Second,
		Build: &report.BuildFailure{Errors: []report.CompileError{{File: "claim.go", Line: 12, Column: 9, Message: "undefined: errInProgress"}}, Output: "labs/01-claim/claim.go:12:9: undefined: errInProgress"}}
	for _, c := range lab.Cases {
		broken.Cases = append(broken.Cases, report.CaseResult{Name: c.Name, Concept: c.Concept, Points: c.Points, Status: report.StatusNotRun, Output: []string{"the code did not compile"}})
	}
	tests := []struct {
		name string
		rep  *report.Report
	}{
		{"failing", failing},
		{"passing", passing},
		{"build-error", broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Markdown(tt.rep, lab, MarkdownOptions{})
			golden := filepath.Join("testdata", "feedback", tt.name+".md")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./grader -run Golden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Markdown(%s) differs from %s; run with -update and review the diff.\ngot:\n%s", tt.name, golden, got)
			}
		})
	}
}

func TestMarkdownNamesMisconceptionHintDocsAndTimeline(t *testing.T) {
	lab := goldenLab
	md := Markdown(fixtureReport(lab), lab, MarkdownOptions{})
	c := lab.Concept(lab.Cases[1].Concept)
	for _, want := range []string{c.Misconception, c.Hint, c.Docs, "EXECUTION #2", "labctl hint 1", "--seed 42"} {
		if !strings.Contains(md, want) {
			t.Errorf("feedback lacks %q", want)
		}
	}
}

func TestNextStepFollowsTheHintLevel(t *testing.T) {
	lab := goldenLab
	rep := fixtureReport(lab)
	tests := []struct {
		seen int
		want string
	}{
		{0, "`labctl hint 1` shows the first of three hints"},
		{1, "`labctl hint 1` shows hint 2 of 3 (you have seen 1)"},
		{2, "`labctl hint 1` shows hint 3 of 3"},
		{3, "You have seen all three hints"},
	}
	for _, tt := range tests {
		got := NextStep(rep, lab, "labctl", MarkdownOptions{HintsSeen: tt.seen})
		if !strings.Contains(got, tt.want) {
			t.Errorf("NextStep(hints seen %d) = %q, want it to contain %q", tt.seen, got, tt.want)
		}
		if tt.seen == 3 && strings.Contains(got, "first of three") {
			t.Errorf("NextStep(hints seen 3) = %q, still offers the first hint", got)
		}
	}
	passing := fixtureReport(lab)
	passing.Passed = true
	if got := NextStep(passing, lab, "labctl", MarkdownOptions{}); got != "" {
		t.Errorf("NextStep(passing) = %q, want \"\"", got)
	}
}

func TestSitePage(t *testing.T) {
	tests := []struct{ in, want string }{
		{"docs/01-claim.md#the-claim-is-one-atomic-step", "01-claim.html#the-claim-is-one-atomic-step"},
		{"docs/README.md", "README.html"},
		{"labs/01-claim/README.md", "labs/01-claim/README.md"},
	}
	for _, tt := range tests {
		if got := SitePage(tt.in); got != tt.want {
			t.Errorf("SitePage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	o := MarkdownOptions{SiteBase: "../.labkit/docs/", DocsPrefix: "ignored/"}
	if got, want := o.DocsLink("docs/02-redis.md#x"), "../.labkit/docs/02-redis.html#x"; got != want {
		t.Errorf("DocsLink = %q, want %q", got, want)
	}
}

// TestBuildErrorInTheShim: a missing New is reported in the kit's cached
// copy of the test file; feedback names the lab's own test file instead and
// advises go vet, which (unlike go build) compiles test files too.
func TestBuildErrorInTheShim(t *testing.T) {
	lab := goldenLab
	lab.TestFile = "claim_test.go"
	cached := "/root/.cache/labkit/overlay/b67352bfba0818ff/claim_test.go"
	rep := &report.Report{Lab: 1, Title: lab.Title, Total: 100, Build: &report.BuildFailure{
		Errors: []report.CompileError{{File: cached, Line: 12, Column: 20, Message: "undefined: New"}},
		Output: cached + ":12:20: undefined: New"}}
	md := Markdown(rep, lab, MarkdownOptions{})
	for _, want := range []string{"labs/01-claim/claim_test.go:12:20: undefined: New", "`go vet ./labs/01-claim/`", "uses a name your package does not define"} {
		if !strings.Contains(md, want) {
			t.Errorf("feedback for a build error in the shim lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, ".cache") || strings.Contains(md, "go build") {
		t.Errorf("feedback for a build error in the shim shows the cache path or advises go build:\n%s", md)
	}
}

func TestTimelineLabel(t *testing.T) {
	lab := goldenLab
	if md := Markdown(fixtureReport(lab), lab, MarkdownOptions{}); !strings.Contains(md, "**Timeline** (virtual time):") {
		t.Errorf("feedback on virtual time does not label its timeline so:\n%s", md)
	}
	md := Markdown(fixtureReport(lab), lab, MarkdownOptions{RealTime: true})
	if !strings.Contains(md, "**Timeline** (real time, against a real server: it differs from run to run):") || strings.Contains(md, "virtual time") {
		t.Errorf("feedback on the real clock labels its timeline wrong:\n%s", md)
	}
}

// TestMarkdownShowsGradingNotes: what the sandbox could not enforce on this
// machine is said in the feedback, once per note.
func TestMarkdownShowsGradingNotes(t *testing.T) {
	lab := report.Lab{Lab: rubric.Lab{Number: 1, Title: "T", Cases: []rubric.Case{{Name: "a", Points: 100}}}}
	rep := &report.Report{Lab: 1, Title: "T", Total: 100, Race: true, Cases: []report.CaseResult{{Name: "a", Points: 100, Status: report.StatusPass}},
		Notes: []string{"no Landlock on this machine: the run could read /proc"}}
	rep.Finalize(lab)
	md := Markdown(rep, lab, MarkdownOptions{})
	if n := strings.Count(md, "**Grading note:** no Landlock on this machine"); n != 1 {
		t.Errorf("Markdown() has the note %d times, want once:\n%s", n, md)
	}
}
