package feedback

import (
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/report"
	"github.com/fourth-outcome/labkit/rubric"
)

func TestNextStepWhenOnlyRaceCasesWereNotExercised(t *testing.T) {
	lab := report.Lab{Lab: rubric.Lab{Number: 1, Cases: []rubric.Case{{Name: "racy", Points: 60, Race: true}}}}
	rep := &report.Report{Total: 60, Cases: []report.CaseResult{{Name: "racy", Points: 60, Status: report.StatusPass}}}
	rep.Finalize(lab)
	got := NextStep(rep, lab, "labctl", MarkdownOptions{})
	if want := "install a C compiler"; !strings.Contains(got, want) || strings.Contains(got, "Fix") {
		t.Errorf("NextStep = %q, want it to ask for %q and not for a fix", got, want)
	}
}
