package grader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/rubric"
)

// Lab is what the grader needs to know of a lab: its rubric, where it lives
// and the pristine test shim overlaid on every run. The grader knows no lab
// by name; package course registers them.
type Lab struct {
	rubric.Lab
	Dir      string // directory under labs/ and solutions/, "01-claim"
	TestFile string // the shim's file name, "claim_test.go"
	Shim     string // the shim's pristine contents
	// Starter is the lab's pristine starter, its non-test .go files by
	// name, as the kit ships them in labs/: the kit's own checks grade
	// these, never labs/, where a learner's work replaces them.
	Starter map[string]string
	NextLab int // the number of the lab that follows, 0 for the last one
	// Fixtures is the directory, relative to the kit root, of the suite's
	// independent test programs: testdata/wrong/<name>/ must each be
	// caught, testdata/correct/<name>/ must each pass ("suites/claimsuite").
	Fixtures string
	// InstrumentSync grades the implementation with its "sync" import
	// pointed at SyncPointPackage, whose mutexes the suite can schedule.
	InstrumentSync bool
	// Imports is every package the lab's code may import, sorted: the
	// standard packages the course allows every lab and the kit or
	// third-party packages this lab needs. The grader refuses any other
	// import before it builds a submission ("unsafe" included).
	Imports []string
	// Signatures is what each of the lab's catalogued mistakes fails
	// (course/signatures, written by labctl verify --write-signatures):
	// a failing run that looks like one of them is shown its
	// misconception (Report.Diagnosis).
	Signatures []diagnosis.Signature
}

// WriteStarter lays the lab's pristine starter in dir: every non-test .go
// file there is removed, then the starter's files are written, so dir holds
// the lab as the kit ships it whatever a learner did to it.
func WriteStarter(dir string, lab Lab) error {
	if len(lab.Starter) == 0 {
		return fmt.Errorf("lab %s: no pristine starter registered", lab.Dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write starter of lab %s: %w", lab.Dir, err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !strings.HasSuffix(f, "_test.go") {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("write starter of lab %s: %w", lab.Dir, err)
			}
		}
	}
	for name, content := range lab.Starter {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("write starter of lab %s: %w", lab.Dir, err)
		}
	}
	return nil
}
