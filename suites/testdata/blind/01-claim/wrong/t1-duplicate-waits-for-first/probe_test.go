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

func TestProbeDuplicateAnsweredAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "k", func(context.Context) (string, error) { <-release; return "a", nil })
		synctest.Wait()
		got := make(chan error, 1)
		go func() {
			_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "b", nil })
			got <- err
		}()
		synctest.Wait()
		var err error
		select {
		case err = <-got:
		default:
			close(release)
			err = <-got
			t.Fatalf("duplicate did not answer at once (later: %v)", err)
		}
		close(release)
		if !errors.Is(err, ErrInProgress) {
			t.Fatalf("err=%v", err)
		}
	})
}
