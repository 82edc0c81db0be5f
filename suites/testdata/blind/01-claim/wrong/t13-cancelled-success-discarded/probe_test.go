package claim

import (
	"context"
	"testing"
)

func TestProbeCancelledCallerKeepsSuccess(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { cancel(); return "sent", nil })
	if v != "sent" || err != nil {
		t.Fatalf("work succeeded while ctx was cancelled: %q, %v; want the success", v, err)
	}
	runs := 0
	v, err = s.Do(context.Background(), "k", func(context.Context) (string, error) { runs++; return "again", nil })
	if runs != 0 || v != "sent" || err != nil {
		t.Fatalf("retry: runs %d, %q, %v; want the stored value", runs, v, err)
	}
}
