package retrysuite_test

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites/retrysuite"
)

func TestLabIsValid(t *testing.T) {
	if err := retrysuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := retrysuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("Lab.TotalPoints() = %d, want 100", got)
	}
}
