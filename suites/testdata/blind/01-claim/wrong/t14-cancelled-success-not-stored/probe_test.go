package claim

import (
	"context"
	"testing"
)

func TestProbeCancelledSuccessStored(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { cancel(); return "sent", nil })
	if v != "sent" || err != nil {
		t.Fatalf("got (%q, %v), want (\"sent\", nil)", v, err)
	}
	ran := false
	v, err = s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "again", nil })
	if ran || v != "sent" || err != nil {
		t.Errorf("retry: ran=%v (%q, %v), want stored \"sent\"", ran, v, err)
	}
}
