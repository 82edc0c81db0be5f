package fencing

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R10): a method called with a done context "changes nothing: no
// grant".
func TestProbeCancelledAcquireGrantsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := NewLocks(Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Acquire(ctx, "report", "A"); err == nil {
			t.Fatal("cancelled Acquire granted")
		}
		if _, err := l.Acquire(context.Background(), "report", "B"); err != nil {
			t.Errorf("Acquire after a cancelled one: %v, want a grant (nothing was granted)", err)
		}
	})
}
