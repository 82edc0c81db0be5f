package backpressure

import (
	"context"
	"testing"
	"time"
)

// Run with -race: Stats from a dashboard while a producer submits.
func TestProbeStatsSynchronised(t *testing.T) {
	q := New(Options{Capacity: 8})
	go q.Submit(context.Background(), "a", "k", Task{})
	time.Sleep(5 * time.Millisecond) // no happens-before edge on purpose
	if d := q.Stats().Depth; d != 1 {
		t.Errorf("Depth %d, want 1", d)
	}
}
