package claim

import (
	"context"
	"fmt"
	"testing"
)

// Promise (Do doc comment): "If work fails, the failing caller gets work's
// error and the key is released: the next caller for the key runs work
// again." README: "In this lab a failure is definite and had no effect."
// The work fails with its own deadline error (e.g. it could not even reach
// the provider in time); it is still a failure and must release the key.
func TestProbeDeadlineFailureReleasesKey(t *testing.T) {
	s := New()
	failure := fmt.Errorf("dial provider: %w", context.DeadlineExceeded)
	_, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "", failure })
	if err != failure {
		t.Fatalf("first Do err = %v, want work's error", err)
	}
	ran := false
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "sent", nil
	})
	if !ran || v != "sent" || err != nil {
		t.Fatalf("after a failed work, next Do = (%q, %v), work ran=%v; want it to run the work again", v, err, ran)
	}
}
