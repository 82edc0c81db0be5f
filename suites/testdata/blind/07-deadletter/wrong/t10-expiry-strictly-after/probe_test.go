package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The task is hidden a nanosecond before Expires and visible at Expires.
func TestProbeVisibleAtExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "t1"})
		m, err := q.Receive(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10*time.Second - time.Nanosecond)
		if _, err := q.Receive(ctx, "b"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("a nanosecond before Expires: %v", err)
		}
		time.Sleep(time.Nanosecond)
		if !time.Now().Equal(m.Expires) {
			t.Fatalf("clock %v, expires %v", time.Now(), m.Expires)
		}
		m2, err := q.Receive(ctx, "b")
		if err != nil || m2.Deliveries != 2 {
			t.Fatalf("at Expires: %v %v", m2, err)
		}
	})
}
