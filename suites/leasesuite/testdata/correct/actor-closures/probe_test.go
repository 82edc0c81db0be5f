package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The actor's lazy expiry is exact: invisible a nanosecond before Expires,
// visible at it; Close stops the actor's goroutine (else synctest reports
// it blocked at the end of the bubble).
func TestProbeActorExpiryIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: time.Minute})
		if c, ok := any(q).(interface{ Close() error }); ok {
			defer c.Close()
		}
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		time.Sleep(time.Until(l.Expires) - 1)
		if _, err := q.Lease(ctx, "w2"); !errors.Is(err, ErrNoTask) {
			t.Fatalf("a nanosecond before Expires: %v", err)
		}
		time.Sleep(1)
		if l2, err := q.Lease(ctx, "w2"); err != nil || l2.Attempt != 2 {
			t.Fatalf("at Expires: %v %v", l2, err)
		}
	})
}
