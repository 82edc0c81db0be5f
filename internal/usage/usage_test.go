package usage

import (
	"errors"
	"fmt"
	"testing"
)

// TestErrorfWrapped: a usage error keeps its one-line message and is found
// through wrapping.
func TestErrorfWrapped(t *testing.T) {
	err := fmt.Errorf("grade: %w", Errorf("--labs %q: bad", "9-2"))
	var ue *Error
	if !errors.As(err, &ue) || ue.Msg != `--labs "9-2": bad` {
		t.Errorf("errors.As(%v) = %v, want the usage error with its message", err, ue)
	}
}
