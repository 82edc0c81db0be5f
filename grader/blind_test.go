package grader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlindRegressions reads a REGRESSIONS list: a lab's lines name its
// programs, other labs' lines are skipped, and a missing program or a line
// of the wrong shape is an error that names the line.
func TestBlindRegressions(t *testing.T) {
	root := t.TempDir()
	blind := filepath.Join(root, filepath.FromSlash(BlindPrograms))
	for _, d := range []string{"01-claim/wrong/a", "01-claim/wrong/b", "02-redis/wrong/c"} {
		if err := os.MkdirAll(filepath.Join(blind, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(blind, "REGRESSIONS"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lab := Lab{Dir: "01-claim"}
	if got, err := blindRegressions(root, lab); err != nil || got != nil {
		t.Errorf("blindRegressions without a list = %v, %v, want none and nil", got, err)
	}
	write("# kept\n01-claim/wrong/a\n\n02-redis/wrong/c\n01-claim/wrong/b\n")
	got, err := blindRegressions(root, lab)
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "a" || filepath.Base(got[1]) != "b" {
		t.Errorf("blindRegressions(01-claim) = %v, %v, want the folders a and b", got, err)
	}
	for line, want := range map[string]string{
		"01-claim/wrong/missing": "REGRESSIONS:1: no program 01-claim/wrong/missing",
		"01-claim/correct/a":     "want <lab dir>/wrong/<program>",
	} {
		write(line + "\n")
		if _, err := blindRegressions(root, lab); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("blindRegressions with the line %q = %v, want an error containing %q", line, err, want)
		}
	}
}
