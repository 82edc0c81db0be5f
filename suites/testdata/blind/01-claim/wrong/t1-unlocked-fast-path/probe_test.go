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

func TestProbeReadersRaceWriters(t *testing.T) {
	// Run with -race. A replay of a completed key and a first claim of
	// another key, from two goroutines with no other synchronisation, must
	// not race: the store is safe for concurrent use.
	s := New()
	s.Do(context.Background(), "done", func(context.Context) (string, error) { return "a", nil })
	for i := 0; i < 20; i++ {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if v, err := s.Do(context.Background(), "done", func(context.Context) (string, error) { return "b", nil }); v != "a" || err != nil {
				t.Errorf("replay: %q %v", v, err)
			}
		}()
		go func() {
			defer wg.Done()
			s.Do(context.Background(), fmt.Sprint("new-", i), func(context.Context) (string, error) { return "c", nil })
		}()
		wg.Wait()
	}
}
