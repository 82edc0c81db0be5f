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

func TestProbeEmptyValueStored(t *testing.T) {
	s := New()
	if _, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	ran := false
	v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "again", nil })
	if ran || v != "" || err != nil {
		t.Fatalf("ran=%v v=%q err=%v", ran, v, err)
	}
}
