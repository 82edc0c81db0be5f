package enginesuite_test

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/enginesuite"
)

func TestLabIsValid(t *testing.T) {
	if err := enginesuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := enginesuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// Correct backends in other styles (a WATCH/MULTI/EXEC Redis backend, an
// actor-style memory backend) are the fixtures in testdata/correct, which
// labctl verify --fixtures runs the suite on.
