package grader

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadMistakeFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "atomic-check-then-act.patch")
	patch := `Concept: retry-budget
Rules: R17, R3
From: 04-retry/wrong/t3-a, 04-retry/wrong/t3-b
Mistake: the budget loads, then adds,
  in two steps.

diff --git a/retry.go b/retry.go
--- a/retry.go
+++ b/retry.go
@@ -1,1 +1,1 @@
-package retry
+package retry // changed
`
	if err := os.WriteFile(path, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMistake(path)
	if err != nil {
		t.Fatalf("ReadMistake = %v, want no error", err)
	}
	got := Mistake{Name: m.Name, Concept: m.Concept, Rules: m.Rules, From: m.From, Summary: m.Summary}
	want := Mistake{Name: "atomic-check-then-act", Concept: "retry-budget", Rules: []string{"R17", "R3"},
		From: []string{"04-retry/wrong/t3-a", "04-retry/wrong/t3-b"}, Summary: "the budget loads, then adds, in two steps."}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Mistake{})); diff != "" {
		t.Errorf("ReadMistake fields (-want +got):\n%s", diff)
	}
}
