package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// VisibilityTimeout zero means 30 s.
func TestProbeZeroTimeoutIs30s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		q.Enqueue(ctx, Task{ID: "a"})
		start := time.Now()
		m, _ := q.Receive(ctx, "c")
		if !m.Expires.Equal(start.Add(30 * time.Second)) {
			t.Fatalf("Expires %v, want start+30s", m.Expires.Sub(start))
		}
		if _, err := q.Receive(ctx, "d"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("second Receive at once: %v", err)
		}
		time.Sleep(30 * time.Second)
		if m2, err := q.Receive(ctx, "d"); err != nil || m2.Deliveries != 2 {
			t.Fatalf("at 30s: %v %v", m2, err)
		}
	})
}
