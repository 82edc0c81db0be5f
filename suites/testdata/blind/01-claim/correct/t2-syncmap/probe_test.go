package claim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeClaimRules(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		s := New()
		ctx := context.Background()
		boom := errors.New("boom")
		if v, err := s.Do(ctx, "f", func(context.Context) (string, error) { return "partial", boom }); v != "partial" || err != boom {
			t.Fatal(v, err)
		}
		release := make(chan struct{})
		var runs atomic.Int32
		go s.Do(ctx, "k", func(context.Context) (string, error) { runs.Add(1); <-release; return "", nil })
		fakeclock.Wait()
		var wg sync.WaitGroup
		for i := 0; i < 19; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs.Add(1); return "x", nil }); !errors.Is(err, ErrInProgress) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if v, err := s.Do(ctx, "other", func(context.Context) (string, error) { return "o", nil }); v != "o" || err != nil {
			t.Fatal(v, err)
		}
		time.Sleep(48 * time.Hour)
		close(release)
		fakeclock.Wait()
		time.Sleep(400 * 24 * time.Hour)
		if v, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs.Add(1); return "x", nil }); v != "" || err != nil || runs.Load() != 1 {
			t.Fatal(v, err, runs.Load())
		}
		for _, k := range []string{"K", "k ", "", " ", "caf\u00e9", "cafe\u0301"} {
			if v, _ := s.Do(ctx, k, func(context.Context) (string, error) { return "own:" + k, nil }); v != "own:"+k {
				t.Fatalf("%q -> %q", k, v)
			}
		}
	})
}
