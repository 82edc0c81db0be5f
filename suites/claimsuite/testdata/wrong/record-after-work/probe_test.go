package claim

import (
	"context"
	"errors"
	"testing"
)

// Promise (Do doc comment): "A caller that arrives while that work is
// running gets an error wrapping ErrInProgress and does not run work."
func TestProbeDuplicateDuringWorkDoesNotRun(t *testing.T) {
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
	ran := false
	_, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "sent-again", nil
	})
	close(release)
	<-done
	if ran {
		t.Fatalf("duplicate ran the work while the first was still running (signing request sent twice)")
	}
	if !errors.Is(err, ErrInProgress) {
		t.Fatalf("duplicate got err=%v, want one wrapping ErrInProgress", err)
	}
}
