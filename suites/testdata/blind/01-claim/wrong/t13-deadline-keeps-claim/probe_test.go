package claim

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestProbeDeadlineFailureReleasesKey(t *testing.T) {
	s := New()
	ctx := context.Background()
	timeout := fmt.Errorf("provider call: %w", context.DeadlineExceeded)
	if _, err := s.Do(ctx, "k", func(context.Context) (string, error) { return "", timeout }); err != timeout {
		t.Fatalf("first: %v", err)
	}
	runs := 0
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs++; return "ok", nil })
	if errors.Is(err, ErrInProgress) || runs != 1 || v != "ok" {
		t.Fatalf("after a wrapped deadline: runs %d, %q, %v; want the work run again", runs, v, err)
	}
}
