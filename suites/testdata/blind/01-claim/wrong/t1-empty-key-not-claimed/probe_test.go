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

func TestProbeEmptyKeyIsAKey(t *testing.T) {
	s := New()
	s.Do(context.Background(), "", func(context.Context) (string, error) { return "a", nil })
	ran := false
	v, err := s.Do(context.Background(), "", func(context.Context) (string, error) { ran = true; return "b", nil })
	if ran || v != "a" || err != nil {
		t.Fatalf("ran=%v v=%q err=%v", ran, v, err)
	}
}
