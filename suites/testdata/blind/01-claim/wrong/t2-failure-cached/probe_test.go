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

func TestProbeFailureReleases(t *testing.T) {
	s := New()
	s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", errors.New("boom") })
	if v, err := s.Do(context.Background(), "k", val("second")); v != "second" || err != nil {
		t.Fatalf("after failure: %q, %v", v, err)
	}
}
