package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
)

// TestCheckHangCostsOneCase checks lab 01 with the reference solution
// patched so that one key ("k-empty", used by one case only) takes a lock
// nobody releases: that case alone times out, naming the student's line
// and "blocked", and every other case still runs and passes. It waits for
// the case budget by design; lab 01's correct cases take milliseconds, so
// the 5s budget leaves a wide margin on a loaded machine.
func TestCheckHangCostsOneCase(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a case to hang")
	}
	lab, err := course.Find("1")
	if err != nil {
		t.Fatal(err)
	}
	kit := copyKit(t)
	src, err := os.ReadFile(filepath.Join(kit, "solutions", lab.Dir, "claim.go"))
	if err != nil {
		t.Fatal(err)
	}
	const do = "func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {\n"
	if !strings.Contains(string(src), do) {
		t.Fatalf("the solution has no line %q to patch", do)
	}
	patched := strings.Replace(string(src), do, do+"\tif key == \"k-empty\" {\n\t\ts.mu.Lock() // and never Unlock\n\t}\n", 1)
	if err := os.WriteFile(filepath.Join(kit, "labs", lab.Dir, "claim.go"), []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	// The claim's own Lock is where the second locker waits.
	line := 0
	lines := strings.Split(patched, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "func (s *Store) claim(") && strings.TrimSpace(lines[i+1]) == "s.mu.Lock()" {
			line = i + 2
		}
	}
	if line == 0 {
		t.Fatal("the solution's claim does not start with s.mu.Lock()")
	}

	r := labctl(t, kit, "check", "1", "--json", "--case-timeout", "5s")
	var rep grader.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if r.code != 1 {
		t.Errorf("check: exit %d, want 1", r.code)
	}
	want := fmt.Sprintf("did not finish within 5s: blocked in sync.Mutex.Lock at claim.go:%d (Store.claim)", line)
	for _, c := range rep.Cases {
		switch {
		case c.Name == "completed_duplicate_gets_stored_result":
			if c.Status != grader.StatusTimeout || len(c.Output) == 0 || c.Output[0] != want {
				t.Errorf("%s: %s %q, want %s starting with %q", c.Name, c.Status, c.Output, grader.StatusTimeout, want)
			}
		case c.Status != grader.StatusPass && c.Status != grader.StatusInconclusive: // inconclusive: without a race detector
			t.Errorf("%s: %s %q, want a pass: a hang costs its own case only", c.Name, c.Status, c.Output)
		}
	}
	if len(rep.Problems) != 0 {
		t.Errorf("Problems = %q, want none", rep.Problems)
	}
}
