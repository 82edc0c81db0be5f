package fencing

import (
	"context"
	"testing"
	"testing/synctest"
)

// Promise (R4): every grant of a resource carries a larger token than every
// earlier grant of that resource, "after a release" too.
func TestProbeTokenGrowsAfterRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{})
		g1, _ := l.Acquire(ctx, "report", "A")
		if err := l.Release(ctx, g1); err != nil {
			t.Fatal(err)
		}
		g2, err := l.Acquire(ctx, "report", "B")
		if err != nil || g2.Token <= g1.Token {
			t.Errorf("after a release: token %d (%v), want more than %d", g2.Token, err, g1.Token)
		}
	})
}
