package claim

import (
	"context"
	"errors"
	"testing"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeDuplicateAnsweredAtOnce(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "k", func(context.Context) (string, error) { <-release; return "v", nil })
		fakeclock.Wait()
		res := make(chan error, 1)
		go func() {
			_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "again", nil })
			res <- err
		}()
		fakeclock.Wait()
		select {
		case err := <-res:
			if !errors.Is(err, ErrInProgress) {
				t.Errorf("duplicate got %v, want ErrInProgress", err)
			}
		default:
			t.Errorf("duplicate is still waiting while the work runs; want ErrInProgress at once")
		}
		close(release)
		fakeclock.Wait()
	})
}
