package claim

import (
	"context"
	"errors"
	"testing"
)

// Promise (README): "A caller that arrives while that work is running gets
// an error wrapping ErrInProgress (so errors.Is(err, ErrInProgress) is true)".
func TestProbeInProgressIsWrapped(t *testing.T) {
	s := New()
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
			close(started)
			<-release
			return "sent", nil
		})
	}()
	<-started
	_, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "x", nil })
	close(release)
	<-done
	if err == nil || !errors.Is(err, ErrInProgress) {
		t.Fatalf("duplicate got err %q; errors.Is(err, ErrInProgress) = false", err)
	}
}
