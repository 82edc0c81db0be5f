package claim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestProbeSimultaneousClaimsRunOnce(t *testing.T) {
	s := New()
	ctx := context.Background()
	const callers = 8
	for round := 0; round < 3000; round++ {
		key := fmt.Sprintf("task-%d", round)
		var runs, settled atomic.Int32
		release := make(chan struct{})
		allSettled := make(chan struct{})
		settle := func() {
			if settled.Add(1) == callers {
				close(allSettled)
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ran := false
				s.Do(ctx, key, func(context.Context) (string, error) {
					ran = true
					runs.Add(1)
					settle()
					<-release
					return "v", nil
				})
				if !ran {
					settle()
				}
			}()
		}
		close(start)
		<-allSettled
		close(release)
		wg.Wait()
		if n := runs.Load(); n != 1 {
			t.Fatalf("round %d: work ran %d times for one key", round, n)
		}
	}
}
