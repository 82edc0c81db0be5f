package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
)

// dateRE matches the dates and times list and check print (a pass on
// record, a last check), the one part of a transcript that changes from
// day to day besides a run's duration.
var dateRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?`)

// TestLearnerJourney follows a new student through the README's first
// steps on a fresh copy of the kit: list the labs, check lab 01 (not
// started), read the first hint, check a first attempt with a bug (a
// failure wrapping a context error keeps its key, the catalogued
// timeout-keeps-claim), read what it looks like, fix it, pass, and see
// what comes next. The transcript, with durations, dates and the kit's
// path normalised, is testdata/journey.txt: a change to anything a
// learner sees on this path shows up in its diff.
func TestLearnerJourney(t *testing.T) {
	skipJourney(t)
	lab, kit := journeyKit(t)
	var tr strings.Builder
	step := func(note string, args ...string) {
		t.Helper()
		r := labctl(t, kit, args...)
		fmt.Fprintf(&tr, "## %s\n$ labctl %s\n%s", note, strings.Join(args, " "), r.stdout)
		if r.code != 0 {
			fmt.Fprintf(&tr, "[exit %d]\n", r.code)
		}
		tr.WriteString("\n")
	}
	step("a new student lists the labs", "list")
	step("and checks the first one before writing anything", "check", "--quiet")
	step("reads the first hint", "hint", "1")
	putTarget(t, kit, lab.Lab, "timeout-keeps-claim")
	step("writes a first attempt that keeps a key whose work failed with a context error", "check", "--quiet")
	putTarget(t, kit, lab.Lab, "solution")
	step("fixes it", "check", "--quiet")
	step("and sees what comes next", "list")
	got := strings.ReplaceAll(tr.String(), kit, "$KIT")
	got = strings.ReplaceAll(got, filepath.ToSlash(kit), "$KIT")
	got = dateRE.ReplaceAllString(got, "DATE")
	compareGolden(t, filepath.Join("testdata", "journey.txt"), got)
}

// skipJourney skips a journey test where it cannot run as recorded: in
// -short mode, and without the race detector.
func skipJourney(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs lab 01's suite three times")
	}
	if ok, why := grader.RaceSupport(); !ok {
		t.Skipf("the journey was recorded with the race detector on, which is unavailable here: %s", why)
	}
}

// journeyKit returns lab 01 and a fresh copy of the kit to walk through it.
func journeyKit(t *testing.T) (course.Lab, string) {
	t.Helper()
	lab, err := course.Find("01")
	if err != nil {
		t.Fatal(err)
	}
	return lab, copyKit(t)
}
