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

func TestProbeLongPendingStillInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "k", func(context.Context) (string, error) { <-release; return "a", nil })
		synctest.Wait()
		time.Sleep(time.Minute)
		ran := false
		_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "b", nil })
		close(release)
		synctest.Wait()
		if ran || !errors.Is(err, ErrInProgress) {
			t.Fatalf("ran=%v err=%v", ran, err)
		}
	})
}
