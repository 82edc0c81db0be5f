package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/interview"
)

// TestInterviewThroughStdin drives each kind of drill with typed input, as
// a script would, and checks what interview remembers.
func TestInterviewThroughStdin(t *testing.T) {
	kit := copyKit(t)

	r := labctlIn(t, kit, "I would look for the two requests at the provider.\nThen the keys.\n\n1 2\n", "interview", "duplicates")
	if r.code != 0 {
		t.Fatalf("interview duplicates: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Prompt: \"Customers report", "── Strong answer ──", "── Weak answer ──", "Why it is weak:", "You named 2/5 points"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("interview duplicates output lacks %q:\n%s", want, r.stdout)
		}
	}

	n, _ := interview.NewNumeric("retry-amplification", 7)
	r = labctlIn(t, kit, n.AnswerText()+"\n", "interview", "retry-amplification", "--seed", "7")
	if r.code != 0 || !strings.Contains(r.stdout, "✓ Right") || !strings.Contains(r.stdout, "Step by step:") {
		t.Errorf("interview retry-amplification with the right answer: exit %d:\n%s", r.code, r.stdout)
	}
	r = labctlIn(t, kit, "1\n", "interview", "recovery-time", "--seed", "7")
	if !strings.Contains(r.stdout, "✗") {
		t.Errorf("interview recovery-time answered 1: want it marked wrong:\n%s", r.stdout)
	}

	r = labctlIn(t, kit, "", "interview", "--reveal", "safe-retries")
	if r.code != 0 || !strings.Contains(r.stdout, "── Strong answer ──") || strings.Contains(r.stdout, "Type your answer") {
		t.Errorf("interview --reveal: exit %d, want the model answer without a question:\n%s", r.code, r.stdout)
	}

	list := labctl(t, kit, "interview", "list")
	for _, want := range []string{"duplicates", "done 1×, last 2/5", "retry-amplification", "done 1×, last right", "recovery-time", "last wrong", "lab 01: "} {
		if !strings.Contains(list.stdout, want) {
			t.Errorf("interview list lacks %q:\n%s", want, list.stdout)
		}
	}
	if strings.Contains(list.stdout, "bug:") {
		t.Errorf("interview list names the bugs of labs not passed:\n%s", list.stdout)
	}
	if r := labctl(t, kit, "interview", "bug:01-claim/check-then-insert"); r.code != 2 || !strings.Contains(r.stderr, "not passed") {
		t.Errorf("interview bug:01-claim/check-then-insert before lab 01 passes: exit %d, %q, want exit 2 saying the lab is not passed", r.code, r.stderr)
	}
	if r := labctlIn(t, kit, "", "interview", "bug"); r.code != 0 || !strings.Contains(r.stdout, "passed none yet") {
		t.Errorf("interview bug before any lab passes: exit %d:\n%s", r.code, r.stdout)
	}
	lab, _ := course.Find("1")
	if err := progress.Save(kit, &progress.State{Labs: map[string]progress.LabState{lab.Dir: progress.AfterCheck(progress.LabState{}, 100, 100, true, 1, time.Now())}}); err != nil {
		t.Fatal(err)
	}
	list = labctl(t, kit, "interview", "list")
	if !strings.Contains(list.stdout, "bug:01-claim/check-then-insert") || strings.Contains(list.stdout, "bug:02") || strings.Contains(list.stdout, "lab 01: ") {
		t.Errorf("interview list after lab 01 passed: want lab 01's bugs named and lab 02's only counted:\n%s", list.stdout)
	}
}

func TestInterviewFindTheBug(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite on a mistake")
	}
	t.Parallel()
	kit := copyKit(t)
	r := labctlIn(t, kit, "Two callers both look the key up, both see nothing, both run.\n\ny\n", "interview", "--race", "off", "--spoilers", "bug:01-claim/check-then-insert")
	if r.code != 0 {
		t.Fatalf("interview bug: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Find the bug: lab 01", "func (s *Store) claim", "The bug: the lookup and the insert are two separately locked steps", "diff --git"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("interview bug output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !timelineRE.MatchString(r.stdout) {
		t.Errorf("interview bug output shows no timeline of a failing case:\n%s", r.stdout)
	}
	if list := labctl(t, kit, "interview", "--spoilers", "list"); !strings.Contains(list.stdout, "last named") {
		t.Errorf("interview list does not remember the bug drill:\n%s", list.stdout)
	}
}

// TestInterviewWithoutSolutions: a student release has no solutions/; the
// find-the-bug drills are left out and the others still work.
func TestInterviewWithoutSolutions(t *testing.T) {
	kit := copyKit(t)
	if err := os.RemoveAll(filepath.Join(kit, "solutions")); err != nil {
		t.Fatal(err)
	}
	r := labctlIn(t, kit, "", "interview", "bug")
	if r.code != 0 || !strings.Contains(r.stdout, "does not include") {
		t.Errorf("interview bug without solutions/: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	list := labctl(t, kit, "interview", "list")
	if list.code != 0 || strings.Contains(list.stdout, "bug:01") || !strings.Contains(list.stdout, "not in this copy") {
		t.Errorf("interview list without solutions/: exit %d:\n%s", list.code, list.stdout)
	}
	if r := labctlIn(t, kit, "\n\n", "interview"); r.code != 0 || !strings.Contains(r.stdout, "Scenario:") {
		t.Errorf("interview without solutions/: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// timelineRE matches a failing case's name followed by its first timeline
// line.
var timelineRE = regexp.MustCompile(`case [a-z_]+:\n\s+t=`)
