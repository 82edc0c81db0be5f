package diagram

import (
	"strings"
	"testing"
)

// recorded is a timeline as lab 01's model case printed it on a failing
// run, with a student's key that needs escaping.
var recorded = []string{
	`t=0s       test       model: a sequence of steps broke the README; the shortest failing sequence found replays below`,
	`t=0s       caller 1   Do("k"), work would return "signed:doc-42", "card declined" -> returned "signed:doc-42", error card declined (the work ran)`,
	`t=0s       caller 2   Do("<b>&x"), work would return "v" -> its work starts and waits`,
	`t=25h0m0s  test       25h0m0s pass`,
	`... 12 more events ...`,
	`t=25h0m0s  caller 2   Do("<b>&x") -> still waiting, without running the work`,
}

func TestFromTimeline(t *testing.T) {
	s, err := FromTimeline("case-1", "Timeline of random_call_sequences_follow_the_rules", recorded)
	if err != nil {
		t.Fatalf("FromTimeline() error = %v", err)
	}
	var lanes []string
	for _, l := range s.Lanes {
		lanes = append(lanes, s.label(l.ID))
	}
	if got, want := strings.Join(lanes, "|"), "caller 1|caller 2|"+CodeLane; got != want {
		t.Errorf("FromTimeline() lanes = %s, want %s", got, want)
	}
	var kinds []StepKind
	for _, st := range s.Steps {
		kinds = append(kinds, st.Kind)
	}
	want := []StepKind{Note, Message, Reply, Message, Reply, Note, Note, Message, Lost}
	if len(kinds) != len(want) {
		t.Fatalf("FromTimeline() steps = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("FromTimeline() step %d kind = %v, want %v (%+v)", i, kinds[i], want[i], s.Steps[i])
		}
	}
	if s.Steps[3].Time != "" || s.Steps[5].Time != "25h0m0s" {
		t.Errorf("FromTimeline() times = %q, %q; want the time shown only when it changes", s.Steps[3].Time, s.Steps[5].Time)
	}
	svg, err := s.SVG()
	if err != nil {
		t.Fatalf("SVG() error = %v", err)
	}
	if strings.Contains(svg, "<b>") || !strings.Contains(svg, "&lt;b&gt;&amp;x") {
		t.Errorf("SVG() does not escape the student's key:\n%s", svg)
	}
	for _, want := range []string{`role="img"`, "<title", "Timeline of random_call_sequences_follow_the_rules", "<desc"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG() lacks %q", want)
		}
	}
}

func TestFromTimelineScheduledSteps(t *testing.T) {
	s, err := FromTimeline("x", "x", []string{
		`t=0s       test  round 1: 2 workers on key "s0", their lock operations interleaved by the suite:`,
		`t=0s       test    start -> worker 7 runs`,
		`t=0s       test    worker 7 Lock -> worker 1 runs`,
		`t=0s       test  worker 1 Do("s0") returned "", in progress`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Lanes) != 3 || s.label(s.Lanes[0].ID) != "worker 7" || s.label(s.Lanes[1].ID) != "worker 1" {
		t.Fatalf("FromTimeline(a schedule) lanes = %+v, want worker 7, worker 1 and the code", s.Lanes)
	}
	if st := s.Steps[2]; st.Kind != Message || st.Text != "Lock (next: worker 1 runs)" {
		t.Errorf("FromTimeline(a schedule) step 2 = %+v, want worker 7's Lock as a message", st)
	}
}

func TestFromTimelineWithoutSteps(t *testing.T) {
	if _, err := FromTimeline("x", "x", []string{"not a timeline"}); err == nil {
		t.Error("FromTimeline(no step) error = nil, want ErrInvalid")
	}
	s, err := FromTimeline("x", "x", []string{"t=0s  test  clock moved"})
	if err != nil || len(s.Lanes) != 1 || s.Steps[0].To != "" {
		t.Errorf("FromTimeline(only the test's steps) = %+v, %v; want one lane with notes on it", s, err)
	}
}
