package claim

import (
	"context"
	"testing"
	"time"
)

// Promise (Do doc comment): "Work for different keys never waits on each
// other." README: "a slow call for one key must not delay a call for another."
func TestProbeOtherKeyNotDelayed(t *testing.T) {
	s := New()
	started, release := make(chan struct{}), make(chan struct{})
	go s.Do(context.Background(), "slow", func(context.Context) (string, error) {
		close(started)
		<-release
		return "slow-done", nil
	})
	<-started
	defer close(release)
	got := make(chan string, 1)
	go func() {
		v, _ := s.Do(context.Background(), "fast", func(context.Context) (string, error) { return "fast-done", nil })
		got <- v
	}()
	select {
	case v := <-got:
		if v != "fast-done" {
			t.Fatalf("Do(fast) = %q, want fast-done", v)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatalf("Do(fast) still blocked after 500ms while work for another key runs")
	}
}
