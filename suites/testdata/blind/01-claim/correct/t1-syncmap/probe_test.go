package claim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeCorrectBasics(t *testing.T) {
	s := New()
	e := errors.New("boom")
	v, err := s.Do(context.Background(), "a", func(context.Context) (string, error) { return "partial", e })
	if v != "partial" || err != e {
		t.Fatalf("got %q %v", v, err)
	}
	v, err = s.Do(context.Background(), "a", func(context.Context) (string, error) { return "", nil })
	if v != "" || err != nil {
		t.Fatalf("got %q %v", v, err)
	}
	v, err = s.Do(context.Background(), "a", func(context.Context) (string, error) { t.Fatal("ran again"); return "", nil })
	if v != "" || err != nil {
		t.Fatalf("got %q %v", v, err)
	}
}

func TestProbeCorrectConcurrent(t *testing.T) {
	for round := 0; round < 50; round++ {
		s := New()
		var runs atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.Do(context.Background(), "k", func(context.Context) (string, error) {
					runs.Add(1)
					return "v", nil
				})
				if err != nil && !errors.Is(err, ErrInProgress) {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if runs.Load() != 1 {
			t.Fatalf("ran %d times", runs.Load())
		}
	}
}

func TestProbeCorrectPendingAndDifferentKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		release := make(chan struct{})
		go s.Do(context.Background(), "slow", func(context.Context) (string, error) { <-release; return "x", nil })
		synctest.Wait()
		time.Sleep(48 * time.Hour)
		if _, err := s.Do(context.Background(), "slow", func(context.Context) (string, error) { return "y", nil }); !errors.Is(err, ErrInProgress) {
			t.Fatalf("want in progress, got %v", err)
		}
		if v, err := s.Do(context.Background(), "other", func(context.Context) (string, error) { return "o", nil }); v != "o" || err != nil {
			t.Fatal(v, err)
		}
		close(release)
		synctest.Wait()
		time.Sleep(400 * 24 * time.Hour)
		if v, err := s.Do(context.Background(), "slow", func(context.Context) (string, error) { return "y", nil }); v != "x" || err != nil {
			t.Fatal(v, err)
		}
	})
}
