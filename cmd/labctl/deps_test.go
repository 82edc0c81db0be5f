package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLabctlLinksNoSuite keeps labctl lean: it reads each lab's rubric from
// course's data, so it must not link a suite, the testing package, or the
// embedded Redis the suites run on. Linking them made labctl a 34 MB
// binary that a newcomer's first go run spent a minute and a half building.
func TestLabctlLinksNoSuite(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == "testing", strings.HasPrefix(pkg, "testing/"),
			strings.HasPrefix(pkg, "github.com/alicebob/miniredis/"),
			pkg == "github.com/fourth-outcome/labkit/suites", strings.HasPrefix(pkg, "github.com/fourth-outcome/labkit/suites/"):
			t.Errorf("labctl links %s; it must link no suite, no testing and no miniredis", pkg)
		}
	}
}
