package claim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fmt.Sprint
var _ = time.Second
var _ = fakeclock.Now

func val(v string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return v, nil }
}

func TestProbeFailingValueKept(t *testing.T) {
	s := New()
	boom := errors.New("boom")
	v, _ := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "partial", boom })
	if v != "partial" {
		t.Fatalf("value %q, want the failing work's \"partial\"", v)
	}
}
