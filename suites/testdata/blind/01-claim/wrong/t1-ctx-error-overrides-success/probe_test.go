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

func TestProbeCancelledCallerKeepsSuccess(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := s.Do(ctx, "k", func(context.Context) (string, error) { cancel(); return "sent", nil })
	if v != "sent" || err != nil {
		t.Fatalf("got (%q, %v)", v, err)
	}
	ran := false
	v, err = s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "again", nil })
	if ran || v != "sent" || err != nil {
		t.Fatalf("retry: ran=%v v=%q err=%v", ran, v, err)
	}
}
