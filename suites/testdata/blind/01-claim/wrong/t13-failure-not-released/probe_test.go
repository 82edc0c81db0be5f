package claim

import (
	"context"
	"errors"
	"testing"
)

func TestProbeFailureReleasesKey(t *testing.T) {
	s := New()
	ctx := context.Background()
	boom := errors.New("provider refused")
	if _, err := s.Do(ctx, "k", func(context.Context) (string, error) { return "", boom }); err != boom {
		t.Fatalf("first: %v", err)
	}
	runs := 0
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs++; return "ok", nil })
	if runs != 1 || v != "ok" || err != nil {
		t.Fatalf("after a failure: runs %d, %q, %v; want the work run again", runs, v, err)
	}
}
