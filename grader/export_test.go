package grader

import "io"

// LandlockABIForTest is the kernel's Landlock ABI version, for tests.
func LandlockABIForTest() int { return landlockABI() }

// PIDNamespacesForTest reports whether the grader can make PID namespaces.
func PIDNamespacesForTest() bool { return pidNamespaces() }

// SetPIDNamespacesForTest makes the grader act as if it could (or could
// not) make PID namespaces, until the returned function is called. Tests
// that use it must not run in parallel with other grading tests.
func SetPIDNamespacesForTest(ok bool) (restore func()) {
	old := pidNamespaces
	pidNamespaces = func() bool { return ok }
	return func() { pidNamespaces = old }
}

// BlindRegressionsForTest returns the lab's blind wrong programs listed in
// the kit's REGRESSIONS file.
func BlindRegressionsForTest(root string, lab Lab) ([]string, error) {
	return blindRegressions(root, lab)
}

// ParseRecordedForTest parses a recorded go test -json stream of the lab,
// signed under key, as one run of the binary from labDir, and finalizes
// the report.
func ParseRecordedForTest(lab Lab, labDir string, key []byte, stream io.Reader, race bool) *Report {
	p := newParser(lab, labDir, nil)
	p.newAttempt(key)
	p.consume(stream)
	rep := p.report("")
	rep.Race = race
	rep.Finalize(lab)
	return rep
}
