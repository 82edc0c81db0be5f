package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var _ = errors.New
var _ = fmt.Sprint
var _ sync.Mutex
var _ = synctest.Wait
var _ = time.Second

func TestProbeDifferentKeysDoNotWait(t *testing.T) {
	// Real goroutines: a goroutine blocked on a sync.Mutex is not durably
	// blocked for synctest. The passing path finishes in microseconds; the
	// 2 s bound is only reached by a store that blocks the other key.
	s := New()
	release := make(chan struct{})
	started := make(chan struct{})
	go s.Do(context.Background(), "slow", func(context.Context) (string, error) { close(started); <-release; return "a", nil })
	<-started
	done := make(chan string, 1)
	go func() {
		v, _ := s.Do(context.Background(), "fast", func(context.Context) (string, error) { return "b", nil })
		done <- v
	}()
	select {
	case v := <-done:
		if v != "b" {
			t.Fatalf("got %q", v)
		}
	case <-time.After(2 * time.Second):
		t.Error("call for another key is blocked behind slow work")
	}
	close(release)
}
