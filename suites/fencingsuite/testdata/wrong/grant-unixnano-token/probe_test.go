package fencing

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R4): "Every grant of a resource carries a larger token than every
// earlier grant ... after a release". A release and the next grant can
// happen at one instant of the clock.
func TestProbeTokensGrowAtOneInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{})
		g1, _ := l.Acquire(ctx, "report", "A")
		l.Release(ctx, g1)
		g2, err := l.Acquire(ctx, "report", "B")
		if err != nil || g2.Token <= g1.Token {
			t.Errorf("grant after a release at the same instant: token %d (%v), want more than %d", g2.Token, err, g1.Token)
		}
	})
}
