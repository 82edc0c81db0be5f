package deadletter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = time.Second
var _ = fakeclock.Advance

func mustNew(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Redrive forgets the last error (R10): a redriven task whose deliveries
// then all crash is dead-lettered with LastError "" (R6: none recorded).
func TestProbeRedriveForgetsLastError(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q := mustNew(t, Options{MaxDeliveries: 1, VisibilityTimeout: 10 * time.Second})
		if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		m, err := q.Receive(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Nack(ctx, m.Receipt, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		if err := q.Redrive(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		m2, err := q.Receive(ctx, "c1")
		if err != nil || m2.Deliveries != 1 {
			t.Fatalf("after redrive: %v, %v", m2, err)
		}
		fakeclock.Advance(10 * time.Second) // the consumer crashed
		dl, err := q.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(dl) != 1 || dl[0].Deliveries != 1 || dl[0].LastError != "" {
			t.Fatalf("List = %v; want a after 1 delivery with LastError \"\" (forgotten by Redrive)", dl)
		}
	})
}
