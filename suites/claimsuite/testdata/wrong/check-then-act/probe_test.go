package claim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Promise (doc comment of Do): "Do runs work at most once for key" and
// README: "the key is claimed in one atomic step".
// Eight callers released together race for a fresh key, many rounds; the
// work must never run twice for one key.
func TestProbeSimultaneousClaimsRunOnce(t *testing.T) {
	for round := 0; round < 2000; round++ {
		s := New()
		var runs atomic.Int32
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
					runs.Add(1)
					time.Sleep(50 * time.Microsecond)
					return "sent", nil
				})
			}()
		}
		start.Done()
		wg.Wait()
		if n := runs.Load(); n != 1 {
			t.Fatalf("round %d: work ran %d times for one key, want 1", round, n)
		}
	}
}
