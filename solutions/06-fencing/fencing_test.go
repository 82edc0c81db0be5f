package fencing

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/fencingsuite"
)

// TestFencing runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestFencing(t *testing.T) {
	fencingsuite.Run(t, NewLocks, NewStore)
}
