package check

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/internal/progress"
)

// TestFirstBuildSaysSo: with an empty build cache the standard library must
// be built first, and check says so before it starts.
func TestFirstBuildSaysSo(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	t.Setenv("GOCACHE", t.TempDir())
	if note := firstBuildNote(context.Background(), root, true); !strings.Contains(note, "race-enabled standard library, once: about a minute") {
		t.Errorf("firstBuildNote(race) with an empty cache = %q", note)
	}
	if note := firstBuildNote(context.Background(), root, false); !strings.Contains(note, "building the standard library, once") {
		t.Errorf("firstBuildNote with an empty cache = %q", note)
	}
}

// TestFastFirstVerdictOnlyWhereTheDetectorScoresNothing: the first check
// of a fresh clone may skip the race detector only for a lab none of whose
// cases earns points by the detector alone.
func TestFastFirstVerdictOnlyWhereTheDetectorScoresNothing(t *testing.T) {
	if l, _ := course.Find("4"); !detectorScores(l.Lab) {
		t.Errorf("detectorScores(04-retry) = false, want true: its budget cases need the detector")
	}
	if l, _ := course.Find("1"); detectorScores(l.Lab) {
		t.Errorf("detectorScores(01-claim) = true, want false: its race case is scheduled by the suite")
	}
}

// TestPassOnRecordNote: a lab that fails now but passed under earlier
// rules says that the pass stays on record, and which rule changed since.
func TestPassOnRecordNote(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	s := progress.AfterCheck(progress.AfterCheck(progress.LabState{}, 100, 100, true, 10, at), 95, 100, false, changelog.Level(), at.Add(time.Hour))
	note := passOnRecordNote(s, 5)
	if !strings.Contains(note, "that pass stays on record") || !strings.Contains(note, "level 13 ") {
		t.Errorf("passOnRecordNote() = %q, want the pass and lab 05's rule change at level 13", note)
	}
}
