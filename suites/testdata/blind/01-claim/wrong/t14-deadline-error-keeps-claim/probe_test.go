package claim

import (
	"context"
	"fmt"
	"testing"
)

func TestProbeDeadlineFailureReleases(t *testing.T) {
	s := New()
	s.Do(context.Background(), "k", func(context.Context) (string, error) {
		return "", fmt.Errorf("provider: %w", context.DeadlineExceeded)
	})
	ran := false
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "v", nil })
	if !ran || v != "v" || err != nil {
		t.Errorf("after a wrapped-deadline failure: ran=%v (%q, %v), want the work to run again", ran, v, err)
	}
}
