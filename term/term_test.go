package term

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
)

var lab = grader.Lab{Dir: "01-claim", TestFile: "claim_test.go", Lab: rubric.Lab{Number: 1, Slug: "claim", Title: "Claim before you execute",
	Concepts: []rubric.Concept{{ID: "atomic", Title: "Atomic", Misconception: "Lookup then insert is a claim.", Hint: "Make it one step.", Docs: "docs/01-claim.md#atomic"}},
	Cases: []rubric.Case{
		{Name: "first", Concept: "atomic", Points: 40, Explanation: "The first property."},
		{Name: "racing", Concept: "atomic", Points: 60, Explanation: "Twenty workers race; the work runs once."},
	}}}

func report(timeline int) *grader.Report {
	rep := &grader.Report{Lab: 1, Title: lab.Title, Total: 100, Race: true}
	rep.Cases = []grader.CaseResult{
		{Name: "first", Concept: "atomic", Points: 40, Earned: 40, Status: grader.StatusPass},
		{Name: "racing", Concept: "atomic", Points: 60, Status: grader.StatusFail, Output: []string{"work ran 2 times, want 1"}},
	}
	for i := range timeline {
		rep.Cases[1].Timeline = append(rep.Cases[1].Timeline, fmt.Sprintf("t=0s  worker %02d  work starts", i))
	}
	rep.Finalize(lab)
	return rep
}

func TestFeedbackFitsOneScreen(t *testing.T) {
	got := Feedback(report(200), lab, Options{Prog: "labctl"})
	if n := strings.Count(got, "\n"); n > MaxLines {
		t.Errorf("Feedback with a 200-line timeline = %d lines, want at most %d:\n%s", n, MaxLines, got)
	}
	for _, want := range []string{"0/60  fail", "✗ racing", "Lookup then insert is a claim.", "Make it one step.", "docs/01-claim.md#atomic", "more lines (labctl check 1 --md shows them all)", "Next: Fix racing, then run `labctl check 1`"} {
		if !strings.Contains(got, want) {
			t.Errorf("Feedback lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b[") {
		t.Errorf("Feedback without colour has escape sequences")
	}
}

// TestFeedbackCutsAtTheTerminalOnly: a line of failure detail is cut at
// the terminal's width, however wide, and not at all when the feedback
// goes to a pipe or a file (Columns 0); prose is wrapped at Width either
// way.
func TestFeedbackCutsAtTheTerminalOnly(t *testing.T) {
	long := "Do(ctx, k1) after cancellation = retry: all 5 attempts failed: sign document: 429 Too Many Requests, want an immediate error wrapping claim: in progress"
	rep := report(0)
	rep.Cases[1].Output = []string{long}
	for _, tt := range []struct {
		columns int
		want    string
	}{
		{0, "    " + long + "\n"},
		{200, "    " + long + "\n"},
		{80, "    " + string([]rune(long)[:75]) + "…\n"},
	} {
		got := Feedback(rep, lab, Options{Width: 80, Columns: tt.columns})
		if !strings.Contains(got, tt.want) {
			t.Errorf("Feedback(Columns: %d) lacks the line %q:\n%s", tt.columns, tt.want, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := len([]rune(l)); n > 80 && l != "    "+long {
				t.Errorf("Feedback(Columns: %d, Width: 80) has a %d-column line that is not failure detail: %q", tt.columns, n, l)
			}
		}
	}
}

func TestFeedbackShortTimelineInFull(t *testing.T) {
	got := Feedback(report(5), lab, Options{})
	if !strings.Contains(got, "worker 04") || strings.Contains(got, "more lines") {
		t.Errorf("a 5-line timeline should be shown in full:\n%s", got)
	}
}

func TestFeedbackColour(t *testing.T) {
	got := Feedback(report(2), lab, Options{Color: true})
	if !strings.Contains(got, "\x1b[31m✗\x1b[0m") {
		t.Errorf("Feedback with colour does not colour the failing mark:\n%q", got)
	}
}

func TestFeedbackPassingSaysNext(t *testing.T) {
	rep := report(0)
	rep.Cases[1].Status = grader.StatusPass
	rep.Finalize(lab)
	got := Feedback(rep, lab, Options{Next: "lab 02, on Redis."})
	if !strings.Contains(got, "Every case passes (2 of 2).") || !strings.Contains(got, "Next: lab 02, on Redis.") {
		t.Errorf("passing feedback:\n%s", got)
	}
}

func TestColorForRespectsNoColor(t *testing.T) {
	var b strings.Builder
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if ColorFor(&b, env(nil)) {
		t.Errorf("ColorFor(a buffer) = true, want false (not a terminal)")
	}
	if ColorFor(&b, env(map[string]string{"NO_COLOR": "1"})) {
		t.Errorf("ColorFor(NO_COLOR=1) = true, want false")
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc ddd", "  ", 9)
	if want := "  aaa bbb\n  ccc ddd\n"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}

func TestProgressReplacesTheLine(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b)
	p.Write([]byte("checking lab 01...\n  PASS a\n  FA"))
	p.Write([]byte("IL b\n"))
	p.Clear()
	if got, want := b.String(), "\r\x1b[2Kchecking lab 01...\r\x1b[2K  PASS a\r\x1b[2K  FAIL b\r\x1b[2K"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
}

func TestFeedbackRealTimeTimeline(t *testing.T) {
	got := Feedback(report(3), lab, Options{Markdown: feedback.MarkdownOptions{RealTime: true}})
	if !strings.Contains(got, "Timeline (real time") || strings.Contains(got, "virtual time") {
		t.Errorf("terminal feedback on the real clock labels its timeline wrong:\n%s", got)
	}
}

// TestIsTerminalNotACharDevice: /dev/null is a character device but no
// terminal, so feedback written there has no colours and the default
// width.
func TestIsTerminalNotACharDevice(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { f.Close() })
	if IsTerminal(f) {
		t.Errorf("IsTerminal(%s) = true, want false", os.DevNull)
	}
	if got := Width(f); got != 80 {
		t.Errorf("Width(%s) = %d, want 80", os.DevNull, got)
	}
	if got := Columns(f); got != 0 {
		t.Errorf("Columns(%s) = %d, want 0: output that is no terminal is not cut", os.DevNull, got)
	}
	if _, err := KeysWithoutEnter(f); err == nil {
		t.Errorf("KeysWithoutEnter(%s) = nil error, want one: it is no terminal", os.DevNull)
	}
}

// TestFeedbackNamesTheRedisServer: the header says which Redis server the
// suite ran against.
func TestFeedbackNamesTheRedisServer(t *testing.T) {
	rep := report(0)
	rep.Redis = "127.0.0.1:6390 db 3"
	got := Feedback(rep, lab, Options{})
	if _, facts, _ := strings.Cut(got, "\n"); !strings.HasPrefix(facts, "race detector on · Redis 127.0.0.1:6390 db 3 · took") {
		t.Errorf("Feedback's header does not name the Redis server:\n%s", got)
	}
}

// TestFeedbackWithDiagnosisFitsOneScreen: a lab of many cases whose
// failure is diagnosed still fits one screen, with the score, the
// diagnosis, the first failure and the next step: the passing cases become
// one line.
func TestFeedbackWithDiagnosisFitsOneScreen(t *testing.T) {
	many := lab
	many.Cases = nil
	rep := &grader.Report{Lab: 1, Title: lab.Title, Total: 100, Race: true}
	for i := range 25 {
		name := fmt.Sprintf("case_%02d", i)
		many.Cases = append(many.Cases, rubric.Case{Name: name, Concept: "atomic", Points: 4, Explanation: strings.Repeat("Why it matters. ", 20)})
		cr := grader.CaseResult{Name: name, Concept: "atomic", Points: 4, Earned: 4, Status: grader.StatusPass}
		if i == 7 {
			cr.Earned, cr.Status, cr.Output = 0, grader.StatusFail, []string{"work ran 2 times, want 1", "second line", "third line"}
			for j := range 30 {
				cr.Timeline = append(cr.Timeline, fmt.Sprintf("t=0s  worker %02d  work starts", j))
			}
		}
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Finalize(many)
	rep.Diagnosis = &diagnosis.Match{Signature: diagnosis.Signature{Mistake: "check-then-insert", Concept: "atomic", Summary: "the lookup and the insert are two steps"}, Similarity: 1, Shared: []string{"case_07"}}
	got := Feedback(rep, many, Options{Prog: "labctl"})
	if n := strings.Count(got, "\n"); n > MaxLines {
		t.Errorf("Feedback = %d lines, want at most %d:\n%s", n, MaxLines, got)
	}
	for _, want := range []string{"96/100", "This looks like a known mistake: the lookup and the insert are two steps", "✗ case_07", "and 24 more cases pass", "Lookup then insert is a claim.", "Next: Fix case_07"} {
		if !strings.Contains(got, want) {
			t.Errorf("Feedback lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "Lookup then insert is a claim.") != 1 {
		t.Errorf("Feedback states the misconception %d times, want once:\n%s", strings.Count(got, "Lookup then insert is a claim."), got)
	}
}
