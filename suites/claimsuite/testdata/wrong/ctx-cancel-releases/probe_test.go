package claim

import (
	"context"
	"testing"
)

// Promises (Do doc comment): "The first caller for a key runs work and gets
// work's value and error unchanged" and "A caller that arrives after the work
// succeeded gets the stored value and a nil error, without running work."
// Here the caller's context is cancelled while the work is finishing, but the
// work succeeds (the signing request went out). It is a success.
func TestProbeCancelledCallerStillSucceeded(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := s.Do(ctx, "task-42", func(context.Context) (string, error) {
		cancel() // the caller gives up just as the provider answers
		return "sent", nil
	})
	if v != "sent" || err != nil {
		t.Errorf("first Do = (%q, %v), want work's (sent, nil) unchanged", v, err)
	}
	ran := false
	v, err = s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "sent-again", nil
	})
	if ran || v != "sent" || err != nil {
		t.Errorf("duplicate after success = (%q, %v), work ran=%v; want (sent, nil), no second signing request", v, err, ran)
	}
}
