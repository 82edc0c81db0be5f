package lease

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/leasesuite"
)

// TestLease runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestLease(t *testing.T) {
	leasesuite.Run(t, New, NewWorker)
}
