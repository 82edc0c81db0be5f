package claim

import (
	"context"
	"errors"
	"testing"
)

func TestProbeErrorReturnedUnchanged(t *testing.T) {
	s := New()
	boom := errors.New("provider refused")
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "partial", boom })
	if err != boom {
		t.Fatalf("error %#v, want the very same error value", err)
	}
	if v != "partial" {
		t.Fatalf("value %q, want the failing work's value", v)
	}
}
