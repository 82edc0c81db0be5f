package claim

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/claimsuite"
)

// TestClaim runs the lab's conformance suite. The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestClaim(t *testing.T) {
	claimsuite.Run(t, New, ErrInProgress)
}
