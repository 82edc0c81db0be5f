package claim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fmt.Sprint
var _ = time.Second
var _ = fakeclock.Now

func val(v string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return v, nil }
}

func TestProbeOtherKeyNotBlocked(t *testing.T) {
	// Real goroutines: a goroutine blocked on a sync.Mutex is not "durably
	// blocked" for synctest, so fakeclock.Wait cannot be used here. The
	// timeout only elapses when the program is wrong.
	s := New()
	release, started := make(chan struct{}), make(chan struct{})
	go s.Do(context.Background(), "a", func(context.Context) (string, error) { close(started); <-release; return "a", nil })
	<-started
	done := make(chan string, 1)
	go func() { v, _ := s.Do(context.Background(), "b", val("b")); done <- v }()
	defer close(release)
	select {
	case v := <-done:
		if v != "b" {
			t.Fatalf("Do(b) = %q", v)
		}
	case <-time.After(time.Second):
		t.Fatal("Do(b) waited for the slow work on a")
	}
}
