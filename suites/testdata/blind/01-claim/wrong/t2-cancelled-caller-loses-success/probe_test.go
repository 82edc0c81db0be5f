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

func TestProbeCancelledCallerKeepsSuccess(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { cancel(); return "v", nil })
	if v != "v" || err != nil {
		t.Fatalf("Do = %q, %v", v, err)
	}
	ran := false
	v, err = s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "again", nil })
	if v != "v" || err != nil || ran {
		t.Fatalf("retry = %q, %v, ran=%v", v, err, ran)
	}
}
