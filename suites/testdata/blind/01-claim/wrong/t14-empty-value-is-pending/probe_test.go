package claim

import (
	"context"
	"testing"
)

func TestProbeEmptySuccessStored(t *testing.T) {
	s := New()
	s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", nil })
	ran := false
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "x", nil })
	if ran || v != "" || err != nil {
		t.Errorf("after an empty success: ran=%v (%q, %v), want (\"\", nil) without running", ran, v, err)
	}
}
