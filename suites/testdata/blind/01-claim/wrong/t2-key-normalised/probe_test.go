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

func TestProbeKeysExact(t *testing.T) {
	s := New()
	s.Do(context.Background(), "task-42", val("lower"))
	for _, k := range []string{"Task-42", "task-42 "} {
		if v, err := s.Do(context.Background(), k, val("own")); v != "own" || err != nil {
			t.Fatalf("%q got %q, %v", k, v, err)
		}
	}
}
