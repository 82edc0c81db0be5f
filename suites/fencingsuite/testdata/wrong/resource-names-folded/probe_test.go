package fencing

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R2): "any string is a resource name ... and names are compared
// exactly": "Report" and "report " are different resources.
func TestProbeResourceNamesAreExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{})
		for _, r := range []string{"report", "Report", "report "} {
			if _, err := l.Acquire(ctx, r, "A"); err != nil {
				t.Errorf("Acquire(%q): %v, want a grant (a different resource)", r, err)
			}
		}
	})
}
