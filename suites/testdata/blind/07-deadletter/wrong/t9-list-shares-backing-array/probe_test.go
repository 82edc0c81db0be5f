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

// List returns a copy: changing it changes nothing in the queue (R9).
func TestProbeListIsACopy(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{MaxDeliveries: 1})
	if err := q.Enqueue(ctx, Task{ID: "a", Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Nack(ctx, m.Receipt, errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	dl, err := q.List(ctx)
	if err != nil || len(dl) != 1 {
		t.Fatalf("%v %v", dl, err)
	}
	dl[0].LastError = "edited"
	dl[0].Task.Subject = "edited"
	dl[0].Deliveries = 99
	again, err := q.List(ctx)
	if err != nil || len(again) != 1 || again[0].LastError != "boom" || again[0].Task.Subject != "s" || again[0].Deliveries != 1 {
		t.Fatalf("List after editing the first copy = %v, %v; want it unchanged", again, err)
	}
}
