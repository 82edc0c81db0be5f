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

func TestProbeResultKeptForever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		s.Do(context.Background(), "k", func(context.Context) (string, error) { return "a", nil })
		time.Sleep(25 * time.Hour)
		ran := false
		v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "b", nil })
		if ran || v != "a" || err != nil {
			t.Fatalf("ran=%v v=%q err=%v", ran, v, err)
		}
	})
}
