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

func TestProbeEmptySuccessReplayed(t *testing.T) {
	s := New()
	s.Do(context.Background(), "k", val(""))
	ran := false
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "x", nil })
	if v != "" || err != nil || ran {
		t.Fatalf("duplicate of empty success = %q, %v, ran=%v", v, err, ran)
	}
}
