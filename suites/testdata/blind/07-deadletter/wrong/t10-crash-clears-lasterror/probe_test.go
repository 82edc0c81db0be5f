package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The last Nack's text is kept through later crashes, which record nothing.
func TestProbeLastErrorKeptThroughCrashes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 3, VisibilityTimeout: 10 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m.Receipt, errors.New("signature service 503"))
		for i := 0; i < 2; i++ {
			if _, err := q.Receive(ctx, "c"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Second) // crash
		}
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].Deliveries != 3 || dl[0].LastError != "signature service 503" {
			t.Fatalf("DLQ = %v", dl)
		}
	})
}
