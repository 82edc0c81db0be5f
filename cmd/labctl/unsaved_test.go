package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnwritableLabkitSaysWhatHappened: when .labkit/ cannot be written,
// each command still does its job, says what it did on stdout and what it
// could not record on stderr (one warning line), and exits with the status
// of its job. Directories in the way of state.json's and interview.json's
// writes stand in for an unwritable .labkit/ (chmod does not stop root).
func TestUnwritableLabkitSaysWhatHappened(t *testing.T) {
	kit := gitKit(t)
	for _, d := range []string{"state.json.tmp", "interview.json"} {
		if err := os.MkdirAll(filepath.Join(kit, ".labkit", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	claim := filepath.Join(kit, "labs", "01-claim", "claim.go")
	if err := os.WriteFile(claim, []byte("package claim\n// my work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args            []string
		in              string
		code            int
		stdout, warning string
	}{
		{[]string{"reset", "--yes", "1"}, "", 0, "labs/01-claim is the starter again", "could not record that lab 01 starts over"},
		{[]string{"hint", "1"}, "", 0, "hint 1 of 3", "could not record that you saw hint 1"},
		{[]string{"interview", "backlog-growth", "--seed", "1"}, "1\n", 0, "Step by step:", "could not record this drill's result"},
		{[]string{"check", "1", "--quiet"}, "", 1, "Lab 01", "could not record this result (0/100)"},
	}
	for _, tt := range tests {
		r := labctlIn(t, kit, tt.in, tt.args...)
		name := "labctl " + strings.Join(tt.args, " ")
		if r.code != tt.code {
			t.Errorf("%s with .labkit/ unwritable: exit %d, want %d (the job's own status)\nstderr: %s", name, r.code, tt.code, r.stderr)
		}
		if !strings.Contains(r.stdout, tt.stdout) {
			t.Errorf("%s with .labkit/ unwritable: stdout lacks %q (what it did):\n%s", name, tt.stdout, r.stdout)
		}
		var warnings []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(l, "labctl: warning: ") {
				warnings = append(warnings, l)
			}
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], tt.warning) {
			t.Errorf("%s with .labkit/ unwritable: warnings %q, want one saying %q", name, warnings, tt.warning)
		}
	}
	if got, _ := os.ReadFile(claim); strings.Contains(string(got), "my work") {
		t.Errorf("reset with .labkit/ unwritable did not restore the starter")
	}
}
