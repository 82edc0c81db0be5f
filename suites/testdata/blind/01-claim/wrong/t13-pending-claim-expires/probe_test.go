package claim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeLongPendingClaimStillInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		ctx := context.Background()
		release := make(chan struct{})
		first := make(chan struct{})
		go func() {
			s.Do(ctx, "k", func(context.Context) (string, error) { <-release; return "v", nil })
			close(first)
		}()
		synctest.Wait()
		for _, d := range []time.Duration{time.Minute, time.Hour, 47 * time.Hour} {
			time.Sleep(d)
			runs := 0
			_, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs++; return "twice", nil })
			if runs != 0 || !errors.Is(err, ErrInProgress) {
				t.Errorf("duplicate after a further %v: runs %d, %v; want ErrInProgress", d, runs, err)
			}
		}
		close(release)
		<-first
	})
}
