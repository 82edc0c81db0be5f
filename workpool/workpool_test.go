package workpool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestEachRunsEveryJobOnceWithinTheLimit(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3, 100} {
		var running, peak atomic.Int64
		var mu sync.Mutex
		seen := map[int]int{}
		release := make(chan struct{})
		go func() {
			// Let jobs pile up before any finishes, so the peak shows
			// the limit rather than the scheduler's luck.
			for range 20 {
				release <- struct{}{}
			}
		}()
		err := Each(context.Background(), n, 20, func(i int) {
			now := running.Add(1)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			<-release
			mu.Lock()
			seen[i]++
			mu.Unlock()
			running.Add(-1)
		})
		if err != nil {
			t.Fatalf("Each(n=%d) = %v, want nil", n, err)
		}
		if len(seen) != 20 {
			t.Errorf("Each(n=%d) ran %d distinct jobs, want 20", n, len(seen))
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("Each(n=%d) ran job %d %d times, want 1", n, i, c)
			}
		}
		limit := int64(max(n, 1))
		if p := peak.Load(); p > limit {
			t.Errorf("Each(n=%d) ran %d jobs at once, want at most %d", n, p, limit)
		}
	}
}

func TestEachStopsStartingJobsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int64
	err := Each(ctx, 1, 10, func(i int) {
		ran.Add(1)
		if i == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Each after cancel = %v, want context.Canceled", err)
	}
	if got := ran.Load(); got < 3 || got > 4 {
		t.Errorf("Each ran %d jobs after a cancel during job 2, want 3 (or 4 if one was already handed over)", got)
	}
}

func TestEachWithNoJobs(t *testing.T) {
	if err := Each(context.Background(), 4, 0, func(int) { t.Error("f called with no jobs") }); err != nil {
		t.Errorf("Each(count=0) = %v, want nil", err)
	}
}
