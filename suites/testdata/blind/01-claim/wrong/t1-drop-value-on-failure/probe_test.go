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

func TestProbeFailingValue(t *testing.T) {
	s := New()
	e := errors.New("boom")
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "partial", e })
	if v != "partial" || err != e {
		t.Fatalf("got (%q, %v), want (\"partial\", %v)", v, err, e)
	}
}
