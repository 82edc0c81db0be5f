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

func TestProbeDuplicateToldAtOnce(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "k", func(context.Context) (string, error) { <-release; return "v", nil })
		fakeclock.Wait()
		done := make(chan error, 1)
		go func() { _, err := s.Do(context.Background(), "k", val("x")); done <- err }()
		fakeclock.Wait()
		var err error
		returned := false
		select {
		case err = <-done:
			returned = true
		default:
		}
		close(release)
		fakeclock.Wait()
		if !returned {
			<-done
			t.Fatal("duplicate waited for the running work")
		}
		if !errors.Is(err, ErrInProgress) {
			t.Fatalf("duplicate got %v", err)
		}
	})
}
