package claim

import (
	"context"
	"errors"
	"testing"
)

// Promise (README): "The first caller for a key runs work and gets work's
// value and error unchanged: the same string, and the very same error value
// (not a copy, not a wrapper)."
func TestProbeErrorReturnedUnchanged(t *testing.T) {
	s := New()
	declined := errors.New("card declined")
	_, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "", declined })
	if err != declined {
		t.Fatalf("Do returned err %v (%T), want the very same error value %p", err, err, declined)
	}
}
