package claim

import (
	"context"
	"testing"
)

func TestProbeEmptyValueIsStored(t *testing.T) {
	s := New()
	ctx := context.Background()
	if v, err := s.Do(ctx, "k", func(context.Context) (string, error) { return "", nil }); v != "" || err != nil {
		t.Fatalf("first: %q %v", v, err)
	}
	runs := 0
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs++; return "x", nil })
	if runs != 0 || v != "" || err != nil {
		t.Fatalf("after an empty success: runs %d, %q, %v; want the stored empty value and nil", runs, v, err)
	}
}
