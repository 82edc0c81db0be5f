package claim

import (
	"context"
	"testing"
)

// Promise (Do doc comment): "A caller that arrives after the work succeeded
// gets the stored value and a nil error, without running work."
// The work's value here is the empty string: a success with an empty value
// (e.g. a provider that returns no reference) is still a success.
func TestProbeEmptyValueIsStillAResult(t *testing.T) {
	s := New()
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "", nil })
	if v != "" || err != nil {
		t.Fatalf("first Do = (%q, %v), want (\"\", nil)", v, err)
	}
	ran := false
	v, err = s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "second", nil
	})
	if ran || v != "" || err != nil {
		t.Fatalf("after success with empty value, duplicate got (%q, %v), work ran=%v; want (\"\", nil) and no run", v, err, ran)
	}
}
