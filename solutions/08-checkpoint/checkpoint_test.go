package checkpoint

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/checkpointsuite"
)

// TestCheckpoint runs the lab's conformance suite. The grader replaces this
// file with its own pristine copy, so editing it changes nothing in
// labctl check.
func TestCheckpoint(t *testing.T) {
	checkpointsuite.Run(t, NewStore, NewRunner)
}
