package grader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildOverlayDropsStudentTestsAndStarterFiles(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	lab := Lab{Dir: "01-claim", TestFile: "claim_test.go", Shim: "package claim\n"}
	labDir := filepath.Join(root, "labs", lab.Dir)
	impl := t.TempDir()
	for name, body := range map[string]string{"store.go": "package claim\n", "extra_test.go": "package claim\n"} {
		if err := os.WriteFile(filepath.Join(impl, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := buildOverlay(labDir, Options{Lab: lab, Impl: impl})
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{
		`"` + filepath.Join(labDir, "claim.go") + `": ""`,       // starter file removed
		`"` + filepath.Join(labDir, "store.go") + `": "` + impl, // submission file added
	} {
		if !strings.Contains(s, want) {
			t.Errorf("overlay lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "extra_test.go") {
		t.Errorf("overlay includes the submission's own test file:\n%s", s)
	}
	if !strings.Contains(s, filepath.Join(labDir, lab.TestFile)) {
		t.Errorf("overlay does not replace the shim %s:\n%s", lab.TestFile, s)
	}
}
