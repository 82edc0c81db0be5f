package fencing

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Promise (Locks doc, R2): the lock service is safe for concurrent use:
// Acquires and Releases of different resources at once (run with -race).
func TestProbeConcurrentReleaseIsSafe(t *testing.T) {
	ctx := context.Background()
	l, _ := NewLocks(Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := fmt.Sprint("r", i)
			for range 50 {
				if g, err := l.Acquire(ctx, r, "w"); err == nil {
					l.Release(ctx, g)
				}
			}
		})
	}
	wg.Wait()
}
