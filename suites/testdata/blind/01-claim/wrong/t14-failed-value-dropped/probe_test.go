package claim

import (
	"context"
	"errors"
	"testing"
)

func TestProbeFailedValueKept(t *testing.T) {
	s := New()
	sentinel := errors.New("partial")
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "half-sent", sentinel })
	if err != sentinel || v != "half-sent" {
		t.Fatalf("got (%q, %v), want (\"half-sent\", sentinel)", v, err)
	}
}
