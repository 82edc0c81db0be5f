package claim

import (
	"context"
	"strings"
	"testing"
)

func TestProbeLongKeysDiffer(t *testing.T) {
	s := New()
	base := strings.Repeat("x", 70*1024)
	s.Do(context.Background(), base+"a", func(context.Context) (string, error) { return "A", nil })
	ran := false
	v, err := s.Do(context.Background(), base+"b", func(context.Context) (string, error) { ran = true; return "B", nil })
	if !ran || v != "B" || err != nil {
		t.Errorf("70 KB key differing in its last byte: ran=%v (%q, %v), want its own work", ran, v, err)
	}
}
