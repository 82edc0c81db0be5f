package grader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/rubric"
)

func TestMarkRaceNotExercised(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Cases: []rubric.Case{
		{Name: "plain", Points: 40},
		{Name: "racy", Points: 60, Race: true},
	}}}
	report := func(race bool) *Report {
		return &Report{Race: race, Score: 100, Total: 100, Passed: true, Cases: []CaseResult{
			{Name: "plain", Points: 40, Earned: 40, Status: StatusPass},
			{Name: "racy", Points: 60, Earned: 60, Status: StatusPass},
		}}
	}
	off := report(false)
	if n := off.MarkRaceNotExercised(lab); n != 1 {
		t.Errorf("MarkRaceNotExercised without the detector = %d, want 1", n)
	}
	want := []CaseResult{
		{Name: "plain", Points: 40, Earned: 40, Status: StatusPass},
		{Name: "racy", Points: 60, Earned: 0, Status: StatusInconclusive, Output: []string{RaceOff}},
	}
	if diff := cmp.Diff(want, off.Cases); diff != "" {
		t.Errorf("cases after MarkRaceNotExercised (-want +got):\n%s", diff)
	}
	if off.Score != 40 || off.Passed {
		t.Errorf("after MarkRaceNotExercised: score %d, passed %v; want 40, false", off.Score, off.Passed)
	}
	on := report(true)
	if n := on.MarkRaceNotExercised(lab); n != 0 || on.Score != 100 || !on.Passed {
		t.Errorf("MarkRaceNotExercised with the detector on changed the report: %d marked, score %d", n, on.Score)
	}
}

func TestNextStepWhenOnlyRaceCasesWereNotExercised(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 1, Cases: []rubric.Case{{Name: "racy", Points: 60, Race: true}}}}
	rep := &Report{Total: 60, Cases: []CaseResult{{Name: "racy", Points: 60, Earned: 60, Status: StatusPass}}}
	rep.MarkRaceNotExercised(lab)
	got := NextStep(rep, lab, "labctl", MarkdownOptions{})
	if want := "install a C compiler"; !strings.Contains(got, want) || strings.Contains(got, "Fix") {
		t.Errorf("NextStep = %q, want it to ask for %q and not for a fix", got, want)
	}
}
