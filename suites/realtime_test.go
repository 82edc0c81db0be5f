package suites

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestRealNowMovesInsideABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		virtual, real := time.Now(), RealNow()
		// Busy, so the bubble's clock stands still; bounded, so a RealNow
		// that reads the bubble's clock fails instead of spinning forever.
		for i := 0; i < 50_000_000 && RealNow().Sub(real) < 5*time.Millisecond; i++ {
		}
		if d := time.Since(virtual); d != 0 {
			t.Fatalf("virtual time moved %v during a busy loop, want 0 (not inside a bubble?)", d)
		}
		if d := RealNow().Sub(real); d < 5*time.Millisecond || d > time.Hour {
			t.Errorf("RealNow() moved %v during the loop, want the wall clock's >= 5ms", d)
		}
	})
}
