package progress

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/changelog"
)

// TestAfterCheckKeepsTheLastPass: a pass becomes the pass on record, a
// failure keeps it, and a failure under changed rules says so.
func TestAfterCheckKeepsTheLastPass(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	passed := AfterCheck(LabState{HintLevel: 2}, 100, 100, true, 10, t0)
	want := &Pass{Score: 100, Total: 100, Rules: 10, CheckedAt: t0}
	if diff := cmp.Diff(want, passed.LastPass); diff != "" || passed.HintLevel != 2 {
		t.Errorf("AfterCheck(pass).LastPass mismatch (-want +got):\n%s (hint level %d, want 2)", diff, passed.HintLevel)
	}
	failed := AfterCheck(passed, 92, 100, false, changelog.Level(), t0.Add(time.Hour))
	if diff := cmp.Diff(want, failed.LastPass); diff != "" {
		t.Errorf("AfterCheck(fail after pass).LastPass mismatch (-want +got):\n%s", diff)
	}
	// A state file from before LastPass: its passing check becomes the record.
	legacy := AfterCheck(LabState{Score: 100, Total: 100, Passed: true, CheckedAt: t0}, 90, 100, false, changelog.Level(), t0.Add(time.Hour))
	if legacy.LastPass == nil || legacy.LastPass.Rules != 0 || !legacy.LastPass.CheckedAt.Equal(t0) {
		t.Errorf("AfterCheck(fail after a pass without LastPass).LastPass = %+v, want the earlier pass at rules level 0", legacy.LastPass)
	}
	if pass, changes := PassedUnderEarlierRules(failed, 5); pass == nil || len(changes) == 0 {
		t.Errorf("PassedUnderEarlierRules(lab 05 passed at level 10, failing at %d) = %v, %d changes, want the pass and lab 05's changes since", changelog.Level(), pass, len(changes))
	}
	same := AfterCheck(passed, 92, 100, false, 10, t0.Add(time.Hour))
	if pass, _ := PassedUnderEarlierRules(same, 5); pass != nil {
		t.Errorf("PassedUnderEarlierRules(failing under the rules it passed under) = %+v, want nil: the learner's own change broke it", pass)
	}
}
