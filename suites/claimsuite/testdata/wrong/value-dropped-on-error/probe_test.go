package claim

import (
	"context"
	"errors"
	"testing"
)

// Promise (Do doc comment): "The first caller for a key runs work and gets
// work's value and error unchanged." README: "the same string, and the very
// same error value". A work may return a value alongside its error (e.g. the
// provider's response body explaining the refusal).
func TestProbeValueWithErrorUnchanged(t *testing.T) {
	s := New()
	declined := errors.New("card declined")
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		return "provider said: insufficient funds", declined
	})
	if v != "provider said: insufficient funds" || err != declined {
		t.Fatalf("Do = (%q, %v), want work's (\"provider said: insufficient funds\", card declined) unchanged", v, err)
	}
}
