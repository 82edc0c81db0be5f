package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// An expired lease is never renewed back to life, even when nobody has
// leased the task since.
func TestProbeExpiredLeaseNotRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		time.Sleep(10 * time.Second)
		if _, err := q.Extend(ctx, l.Token, time.Minute); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Extend at Expires: %v, want ErrLeaseLost", err)
		}
		l2, err := q.Lease(ctx, "w2")
		if err != nil || l2.Attempt != 2 {
			t.Fatalf("task not visible after its lease ended: %v %v", l2, err)
		}
	})
}
