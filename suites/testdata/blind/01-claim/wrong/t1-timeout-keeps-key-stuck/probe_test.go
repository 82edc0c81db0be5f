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

func TestProbeWrappedDeadlineReleases(t *testing.T) {
	s := New()
	e := errorsJoinWrap()
	_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", e })
	if err != e {
		t.Fatalf("err=%v", err)
	}
	ran := false
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "b", nil })
	if !ran || v != "b" || err != nil {
		t.Fatalf("ran=%v v=%q err=%v", ran, v, err)
	}
}

type wrapDeadline struct{}

func (wrapDeadline) Error() string { return "provider: deadline" }
func (wrapDeadline) Unwrap() error { return context.DeadlineExceeded }

func errorsJoinWrap() error { return wrapDeadline{} }
