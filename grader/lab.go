package grader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fourth-outcome/labkit/report"
)

// Lab is what the grader needs to know of a lab (package report).
type Lab = report.Lab

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
