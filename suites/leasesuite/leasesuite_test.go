package leasesuite

import "testing"

func TestLabIsValid(t *testing.T) {
	if err := Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := Lab.TotalPoints(); got != 100 {
		t.Errorf("Lab.TotalPoints() = %d, want 100", got)
	}
}
