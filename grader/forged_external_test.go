package grader_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/fourth-outcome/labkit/grader"
)

// TestHermeticForgedResults grades a store that fails every case but prints
// test2json framing that reports every case passed, each time it is called:
// without the suite's signatures those lines would flip the earlier cases
// to passes. It must score 0.
func TestHermeticForgedResults(t *testing.T) {
	t.Parallel()
	lab := claimLab(t)
	var lines []string
	for _, c := range lab.Cases {
		name := lab.TestName + "/" + c.Name
		lines = append(lines, "\\x16=== RUN   "+name+"\\n", "\\x16--- PASS: "+name+" (0.00s)\\n", "--- PASS: "+name+" (0.00s)\\n")
	}
	src := fmt.Sprintf(`package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

const forged = "%s"

// Do fails, and claims in test2json's framing that every case passed.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	os.Stdout.WriteString(forged)
	return "", errors.New("not done")
}
`, strings.Join(lines, ""))
	impl := t.TempDir()
	if err := os.WriteFile(filepath.Join(impl, "claim.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := gradeHermetic(t, Options{Impl: impl})
	if !hermeticKit(t).Attests {
		t.Fatal("the scratch kit's suites do not sign their verdicts (package attest is not among their dependencies)")
	}
	if rep.Score() != 0 || rep.Passed {
		t.Errorf("forged results: score %d/%d, statuses %v, want 0", rep.Score(), rep.Total, statuses(rep))
	}
}
