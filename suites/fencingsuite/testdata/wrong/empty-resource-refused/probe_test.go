package fencing

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R2): "any string is a resource name, the empty one included".
func TestProbeEmptyResourceIsAResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{})
		g, err := l.Acquire(ctx, "", "A")
		if err != nil || g.Token == 0 {
			t.Fatalf("Acquire(\"\"): %v, %v; want a grant", g, err)
		}
		if _, err := l.Acquire(ctx, "", "B"); !errors.Is(err, ErrLockHeld) {
			t.Errorf("second Acquire(\"\"): %v, want ErrLockHeld", err)
		}
	})
}
