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

func TestProbeSameErrorValue(t *testing.T) {
	s := New()
	boom := errors.New("boom")
	_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", boom })
	if err != boom {
		t.Fatalf("Do returned %v (%T), not the work's error value", err, err)
	}
}
