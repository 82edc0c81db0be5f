package claim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (README): "A caller that arrives while that work is running gets
// an error wrapping ErrInProgress ... It gets this answer immediately; it
// does not wait for the first caller to finish."
func TestProbeInProgressAnswerIsImmediate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		started, release := make(chan struct{}), make(chan struct{})
		go s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
			close(started)
			<-release
			return "sent", nil
		})
		<-started
		type res struct {
			v   string
			err error
		}
		got := make(chan res, 1)
		go func() {
			v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "again", nil })
			got <- res{v, err}
		}()
		select {
		case r := <-got:
			if !errors.Is(r.err, ErrInProgress) {
				t.Errorf("duplicate got (%q, %v), want ErrInProgress", r.v, r.err)
			}
		case <-time.After(time.Millisecond): // virtual time: any wait at all
			t.Errorf("duplicate still waiting 1ms (virtual) after the claim; it must get ErrInProgress at once")
		}
		close(release)
	})
}
