package claim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (Do doc comment): "A caller that arrives while that work is
// running gets an error wrapping ErrInProgress and does not run work."
// No time limit is given: slow work (here 2 minutes) is still running.
func TestProbeSlowWorkStillClaimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		go s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
			time.Sleep(2 * time.Minute) // slow provider
			return "sent", nil
		})
		time.Sleep(time.Minute)
		ran := false
		_, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
			ran = true
			return "sent-again", nil
		})
		if ran || !errors.Is(err, ErrInProgress) {
			t.Errorf("duplicate 1 min into 2-min work: err=%v, work ran=%v; want ErrInProgress and no run", err, ran)
		}
		time.Sleep(2 * time.Minute)
	})
}
