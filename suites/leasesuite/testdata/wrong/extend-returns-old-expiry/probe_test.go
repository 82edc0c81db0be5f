package lease

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R5): Extend "returns the renewed lease (same token, holder and
// attempt)", ending d after now.
func TestProbeExtendReturnsTheRenewedLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 30 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		l, _ := q.Lease(ctx, "w1")
		time.Sleep(20 * time.Second)
		r, err := q.Extend(ctx, l.Token, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Now().Add(30 * time.Second); !r.Expires.Equal(want) {
			t.Errorf("renewed lease expires %v, want %v", r.Expires, want)
		}
		if r.Token != l.Token || r.Holder != "w1" || r.Attempt != 1 {
			t.Errorf("renewed lease %+v", r)
		}
	})
}
