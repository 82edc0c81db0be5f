package claim

import (
	"context"
	"testing"
)

// Promise (Do doc comment): "Do runs work at most once for key"; README:
// "runs work at most once per key". Different keys are different tasks:
// "Task-42" and "task-42" (or "task-42 ") are distinct idempotency keys, and
// each must get its own execution and its own result.
func TestProbeDistinctKeysAreDistinct(t *testing.T) {
	s := New()
	s.Do(context.Background(), "Task-42", func(context.Context) (string, error) { return "sent:Task-42", nil })
	ran := false
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "sent:task-42", nil
	})
	if !ran || v != "sent:task-42" || err != nil {
		t.Fatalf("Do(\"task-42\") after Do(\"Task-42\") = (%q, %v), work ran=%v; want its own execution", v, err, ran)
	}
}
