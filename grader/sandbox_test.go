package grader

import (
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/rubric"
)

// TestRaceRuntimeWarningIsDropped parses the stream of a race-enabled
// binary that exits in init under the sandbox, where the race runtime
// warns twice that it cannot read /proc: the warning is not the student's
// output and must not reach the report.
func TestRaceRuntimeWarningIsDropped(t *testing.T) {
	lab := Lab{Lab: rubric.Lab{Number: 1, TestName: "TestClaim", Cases: []rubric.Case{{Name: "a", Points: 100}}}}
	const warning = "==2==WARNING: reading executable name failed with errno 2, some stack frames may not be symbolized"
	rep := parseStream(t, lab, stream(t, "output - "+warning, "output - "+warning, "output - hello from init", "pass -"))
	all := strings.Join(rep.Problems, "\n")
	if strings.Contains(all, "reading executable name") || !strings.Contains(all, "hello from init") {
		t.Errorf("Problems = %q, want the binary's own last output without the race runtime's warning", rep.Problems)
	}
}
