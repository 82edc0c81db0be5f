package claim

import (
	"context"
	"testing"
	"time"
)

func TestProbeOtherKeyNotBlocked(t *testing.T) {
	s := New()
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	slow := make(chan struct{})
	go func() {
		s.Do(ctx, "slow", func(context.Context) (string, error) { close(started); <-release; return "v", nil })
		close(slow)
	}()
	<-started
	other := make(chan string, 1)
	go func() {
		v, _ := s.Do(ctx, "fast", func(context.Context) (string, error) { return "f", nil })
		other <- v
	}()
	select {
	case v := <-other:
		if v != "f" {
			t.Errorf("fast key: %q", v)
		}
	case <-time.After(2 * time.Second):
		t.Error("a call for another key waited for the slow work")
	}
	close(release)
	<-slow
}
