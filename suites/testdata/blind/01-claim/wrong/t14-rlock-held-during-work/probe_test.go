package claim

import (
	"context"
	"testing"
	"time"
)

func TestProbeOtherKeyNotBlocked(t *testing.T) {
	s := New()
	release := make(chan struct{})
	started := make(chan struct{})
	firstDone := make(chan struct{})
	go func() {
		s.Do(context.Background(), "slow", func(context.Context) (string, error) { close(started); <-release; return "v", nil })
		close(firstDone)
	}()
	<-started
	res := make(chan error, 1)
	go func() {
		_, err := s.Do(context.Background(), "fast", func(context.Context) (string, error) { return "f", nil })
		res <- err
	}()
	select {
	case err := <-res:
		if err != nil {
			t.Errorf("fast key: %v", err)
		}
	case <-time.After(2 * time.Second): // only reached by a store that blocks
		t.Errorf("a call for another key waited on the slow work")
		close(release)
		<-res
		<-firstDone
		return
	}
	close(release)
	<-firstDone
}
