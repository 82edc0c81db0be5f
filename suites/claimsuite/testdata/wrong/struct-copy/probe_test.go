package claim

import (
	"context"
	"testing"
)

// Promise (Do doc comment): "A caller that arrives after the work succeeded
// gets the stored value and a nil error, without running work."
func TestProbeCompletedDuplicateNilError(t *testing.T) {
	s := New()
	s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "sent", nil })
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "again", nil })
	if v != "sent" || err != nil {
		t.Fatalf("duplicate after success = (%q, %v), want (sent, nil)", v, err)
	}
}
