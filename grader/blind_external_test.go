package grader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
)

// TestBlindRegressionsInTheKit checks the kit's own list: every line names
// a blind wrong program of a registered lab, and the list is not empty.
func TestBlindRegressionsInTheKit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, lab := range course.Built() {
		got, err := grader.BlindRegressionsForTest(root, lab.Lab)
		if err != nil {
			t.Fatal(err)
		}
		total += len(got)
	}
	// A line naming no registered lab would be skipped by every lab's
	// fixtures run: every listed line must be found under some lab.
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(grader.BlindPrograms), "REGRESSIONS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed++
		}
	}
	if total == 0 || total != listed {
		t.Errorf("blind regressions found under the registered labs: %d, want every one of the %d lines of %s/REGRESSIONS", total, listed, grader.BlindPrograms)
	}
}
