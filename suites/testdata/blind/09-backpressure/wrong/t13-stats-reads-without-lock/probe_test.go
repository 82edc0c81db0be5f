package backpressure

import (
	"context"
	"sync"
	"testing"
)

func TestProbeStatsConcurrentWithSubmit(t *testing.T) {
	q := New(Options{Capacity: 64, TenantLimit: 64})
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			_ = q.Submit(ctx, "a", "k", Task{})
			_, _ = q.Take(ctx)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			s := q.Stats()
			if s.Depth < 0 || s.Depth > 64 {
				t.Errorf("depth %d", s.Depth)
			}
		}
	}()
	wg.Wait()
	if s := q.Stats(); s.Depth != 0 || s.InFlight != 200 {
		t.Fatalf("final stats %v", s)
	}
}
