package fencing

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R5): Release frees the resource "when g is its current grant: the
// same token, not expired"; otherwise ErrLockLost.
func TestProbeExpiredGrantIsNotReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l, _ := NewLocks(Options{TTL: 10 * time.Second})
		g, _ := l.Acquire(ctx, "report", "A")
		time.Sleep(10 * time.Second)
		if err := l.Release(ctx, g); !errors.Is(err, ErrLockLost) {
			t.Errorf("Release at Expires: %v, want ErrLockLost", err)
		}
	})
}
