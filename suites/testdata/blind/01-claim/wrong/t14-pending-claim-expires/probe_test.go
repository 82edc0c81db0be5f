package claim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeLongPendingStillInProgress(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "k", func(context.Context) (string, error) { <-release; return "v", nil })
		fakeclock.Advance(2 * time.Hour)
		ran := false
		_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "again", nil })
		if ran || !errors.Is(err, ErrInProgress) {
			t.Errorf("two hours into the work: ran=%v err=%v, want ErrInProgress and no run", ran, err)
		}
		close(release)
		fakeclock.Wait()
	})
}
