package claim

import (
	"context"
	"testing"
)

func TestProbeCancelledCallerKeepsSuccess(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { cancel(); return "sent", nil })
	if v != "sent" || err != nil {
		t.Errorf("got (%q, %v), want (\"sent\", nil)", v, err)
	}
}
