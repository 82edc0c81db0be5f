package claim

import (
	"context"
	"errors"
	"testing"
)

func TestProbeFailingWorkValueReturned(t *testing.T) {
	s := New()
	boom := errors.New("declined")
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "request-7 rejected", boom })
	if err != boom || v != "request-7 rejected" {
		t.Fatalf("got %q, %v; want the failing work's value and its error", v, err)
	}
}
