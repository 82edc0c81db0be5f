package gradebook

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/fourth-outcome/labkit/grader"
)

// hostileOutput is what a submission prints to pass for a perfect score in
// a renderer that shows Markdown and HTML: a heading, a table, HTML, a
// link, and a run of backticks that would close a three-backtick fence.
var hostileOutput = []string{
	"# 100/100",
	"```",
	"## Every case passes",
	"| case | points |",
	"| --- | --- |",
	"| all | 100/100 |",
	"<h1>100/100</h1><img src=x onerror=alert(1)>",
	"",
	"[full marks](https://example.com) **100/100** ````",
}

// permissive renders Markdown as a lenient platform might: GFM, with raw
// HTML passed through, so that anything not fenced or escaped shows.
var permissive = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))

// forgedMarkup lists what the rendered HTML of md shows of hostileOutput
// outside code: headings or strong text with a score, tables, raw HTML,
// links.
func forgedMarkup(tb testing.TB, md string) []string {
	tb.Helper()
	var out bytes.Buffer
	if err := permissive.Convert([]byte(md), &out); err != nil {
		tb.Fatal(err)
	}
	page := out.String()
	// Code blocks and spans show their content as text: drop them.
	page = regexp.MustCompile(`(?s)<pre><code[^>]*>.*?</code></pre>|<code>.*?</code>`).ReplaceAllString(page, "")
	var found []string
	for _, re := range []string{`<h[1-6][^>]*>[^<]*(100/100|Every case passes)`, `<table`, `<img`, `<a href="https://example`, `<strong>100/100`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			found = append(found, m)
		}
	}
	return found
}

func hostileStudent() Student {
	r := report(grader.StatusFail)
	r.Cases[1].Output = hostileOutput
	r.Problems = []string{"the suite stopped before its first case: <h1>100/100</h1> **100/100** | a | b |\n" + strings.Join(hostileOutput, "\n")}
	build := report(grader.StatusFail)
	build.Cases = nil
	build.Build = &grader.BuildFailure{Errors: []grader.CompileError{{File: "claim`.go", Line: 3, Message: `cannot use "<h1>100/100</h1>" (untyped string constant) as int value`}}, Output: strings.Join(hostileOutput, "\n")}
	other := lab
	other.Lab.Number = 2
	return Student{Name: "<b>mallory</b>", Notes: []string{"symlink <h1>100/100</h1> left out"}, Labs: []Result{
		{Student: "mallory", Lab: lab, Report: r},
		{Student: "mallory", Lab: other, Report: build},
	}}
}

// TestStudentOutputRendersAsText renders the feedback and every Gradescope
// test panel of a submission that printed a fake perfect score, as a
// lenient renderer would, and finds none of it outside code.
func TestStudentOutputRendersAsText(t *testing.T) {
	st := hostileStudent()
	o := Options{Labs: []grader.Lab{lab, lab}}
	md := StudentMarkdown(st, o)
	if got := forgedMarkup(t, md); len(got) > 0 {
		t.Errorf("feedback.md renders the student's output as markup: %q\n%s", got, md)
	}
	g := Gradescope(st, o, md)
	for _, tc := range g.Tests {
		if got := forgedMarkup(t, tc.Output); len(got) > 0 {
			t.Errorf("Gradescope test %q renders the student's output as markup: %q\n%s", tc.Name, got, tc.Output)
		}
	}
	if !strings.Contains(g.Tests[1].Output, "# 100/100") {
		t.Errorf("Gradescope test output = %q, want the student's output shown, as text", g.Tests[1].Output)
	}
	failure := GradescopeFailure(strings.Join(hostileOutput, "\n"))
	if got := forgedMarkup(t, failure.Output); len(got) > 0 || failure.Score != 0 {
		t.Errorf("GradescopeFailure renders its reason as markup: %q, score %v", got, failure.Score)
	}
}

// TestForgedMarkupIsCaught guards the check above: the same output, not
// fenced, is caught.
func TestForgedMarkupIsCaught(t *testing.T) {
	var raw []string
	for _, l := range hostileOutput {
		if l != "```" { // it would open a code block over the rest
			raw = append(raw, l)
		}
	}
	if got := forgedMarkup(t, strings.Join(raw, "\n")); len(got) < 4 {
		t.Errorf("forgedMarkup(raw hostile output) = %q, want the heading, table, HTML and link found", got)
	}
}

func TestClassroom(t *testing.T) {
	st := Student{Name: "s", Labs: []Result{{Student: "s", Lab: lab, Report: report(grader.StatusFail)}}}
	c := Classroom(st, Options{Labs: []grader.Lab{lab}})
	if c.Version != 1 || c.Status != "fail" || c.MaxScore != 100 || c.Points() != "40/100" || len(c.Tests) != 2 || c.Tests[0].Status != "pass" || c.Tests[1].Score != 0 {
		t.Errorf("Classroom(40/100) = %+v, want version 1, fail, 40/100 over two tests", c)
	}
	pass := Classroom(Student{Name: "s", Labs: []Result{{Student: "s", Lab: lab, Report: report(grader.StatusPass)}}}, Options{Labs: []grader.Lab{lab}})
	if pass.Status != "pass" || pass.Points() != "100/100" {
		t.Errorf("Classroom(100/100) = %+v, want pass 100/100", pass)
	}
	sum := ClassroomSummary(st, Options{Labs: []grader.Lab{lab}}, "feedback")
	for _, want := range []string{"## Points 40/100", "| first | 40/40 | passed |", "| second | 0/60 | failed |", "feedback"} {
		if !strings.Contains(sum, want) {
			t.Errorf("ClassroomSummary lacks %q:\n%s", want, sum)
		}
	}
}

// TestGradescopeJSONSurvivesAnyText checks that a reason holding what broke
// printf JSON (tabs, quotes, backslashes, control characters) still gives
// valid JSON that decodes to the same text.
func TestGradescopeJSONSurvivesAnyText(t *testing.T) {
	reason := "panic: \"x\"\t\\n\x01\x7f\n\tgoroutine 1"
	data, err := json.Marshal(GradescopeFailure(reason))
	if err != nil {
		t.Fatal(err)
	}
	var back GradescopeResults
	if err := json.Unmarshal(data, &back); err != nil || !strings.Contains(back.Output, "\tgoroutine 1") {
		t.Errorf("GradescopeFailure JSON = %s (%v), want it to decode with the reason intact", data, err)
	}
}
