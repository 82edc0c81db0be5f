package claim

import (
	"context"
	"errors"
	"testing"
)

func TestProbeWrapWorkError(t *testing.T) {
	s := New()
	sentinel := errors.New("provider refused")
	_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", sentinel })
	if err != sentinel {
		t.Fatalf("got %v, want the very same error value", err)
	}
}
