package claim

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestProbeDuplicateAnsweredAtOnce(t *testing.T) {
	s := New()
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := s.Do(ctx, "k", func(context.Context) (string, error) { close(started); <-release; return "v", nil })
		first <- err
	}()
	<-started
	dup := make(chan error, 1)
	go func() {
		_, err := s.Do(ctx, "k", func(context.Context) (string, error) { return "twice", nil })
		dup <- err
	}()
	select {
	case err := <-dup:
		if !errors.Is(err, ErrInProgress) {
			t.Errorf("duplicate: %v, want ErrInProgress", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("duplicate waited for the running work instead of being told in progress at once")
	}
	close(release)
	<-first
}
