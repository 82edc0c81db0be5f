package grader

import (
	"encoding/json"
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
	data, _, err := buildOverlay(labDir, Options{Lab: lab, Impl: impl})
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

func TestBuildOverlayInstrumentsSyncWhenTheLabAsks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	labDir := filepath.Join(root, "labs", "01-claim")
	lab := Lab{Dir: "01-claim", TestFile: "claim_test.go", Shim: "package claim\n", InstrumentSync: true}
	// The implementation imports sync (the starter does not).
	impl := t.TempDir()
	if err := os.WriteFile(filepath.Join(impl, "claim.go"), []byte("package claim\n\nimport \"sync\"\n\nvar mu sync.Mutex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Lab: lab, Impl: impl}, {Lab: lab}} {
		if o.Impl == "" {
			labDir = impl // graded as it is on disk
		}
		data, copies, err := buildOverlay(labDir, o)
		if err != nil {
			t.Fatal(err)
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(data, &ov); err != nil {
			t.Fatal(err)
		}
		copied := ov.Replace[filepath.Join(labDir, "claim.go")]
		// The compiler names the copy; errors must name the file it
		// stands for.
		if got, want := copies[copied], filepath.Join(impl, "claim.go"); got != want {
			t.Errorf("buildOverlay(impl %q): the copy %s stands for %q, want %q", o.Impl, copied, got, want)
		}
		if got, want := copies[ov.Replace[filepath.Join(labDir, lab.TestFile)]], "labs/01-claim/claim_test.go"; got != want {
			t.Errorf("buildOverlay(impl %q): the shim's copy stands for %q, want %q", o.Impl, got, want)
		}
		src, err := os.ReadFile(copied)
		if err != nil {
			t.Fatalf("overlay (impl %q) has no readable claim.go: %v", o.Impl, err)
		}
		if !strings.Contains(string(src), SyncPointPackage) {
			t.Errorf("overlay (impl %q): claim.go still imports the real sync:\n%s", o.Impl, src)
		}
	}
}

func TestBuildOverlayInstrumentsAtomicWhenTheLabAsks(t *testing.T) {
	impl := t.TempDir()
	src := "package retry\n\nimport (\n\t\"sync\"\n\t\"sync/atomic\"\n)\n\nvar (\n\tmu sync.Mutex\n\tn  atomic.Int64\n)\n"
	if err := os.WriteFile(filepath.Join(impl, "retry.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		lab        Lab
		sync, atom bool
	}{
		{Lab{Dir: "04-retry", TestFile: "retry_test.go", Shim: "package retry\n", InstrumentSync: true, InstrumentAtomic: true}, true, true},
		{Lab{Dir: "04-retry", TestFile: "retry_test.go", Shim: "package retry\n", InstrumentAtomic: true}, false, true},
		{Lab{Dir: "04-retry", TestFile: "retry_test.go", Shim: "package retry\n", InstrumentSync: true}, true, false},
	} {
		data, copies, err := buildOverlay(impl, Options{Lab: tt.lab})
		if err != nil {
			t.Fatal(err)
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(data, &ov); err != nil {
			t.Fatal(err)
		}
		copied := ov.Replace[filepath.Join(impl, "retry.go")]
		if got, want := copies[copied], filepath.Join(impl, "retry.go"); got != want {
			t.Errorf("sync %v atomic %v: the copy %s stands for %q, want %q", tt.lab.InstrumentSync, tt.lab.InstrumentAtomic, copied, got, want)
		}
		got, err := os.ReadFile(copied)
		if err != nil {
			t.Fatal(err)
		}
		s := string(got)
		if strings.Contains(s, "sync \""+SyncPointPackage+"\"") != tt.sync || strings.Contains(s, "atomic \""+SyncPointAtomicPackage+"\"") != tt.atom {
			t.Errorf("sync %v atomic %v: the copy reads\n%s", tt.lab.InstrumentSync, tt.lab.InstrumentAtomic, s)
		}
		if strings.Count(s, "\n") != strings.Count(src, "\n") {
			t.Errorf("the copy has %d lines, the file %d", strings.Count(s, "\n"), strings.Count(src, "\n"))
		}
	}
}
