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

// Every delivery gets a receipt no other delivery had (R3), also after a
// Redrive restarts the count; the last receipt of a dead-lettered task
// acknowledges nothing (R8).
func TestProbeReceiptsUniqueAcrossRedrive(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{MaxDeliveries: 1})
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	m1, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Nack(ctx, m1.Receipt, errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	if err := q.Redrive(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	m2, err := q.Receive(ctx, "c2")
	if err != nil || m2.Deliveries != 1 {
		t.Fatalf("%v %v", m2, err)
	}
	if m2.Receipt == m1.Receipt {
		t.Fatalf("delivery after Redrive got receipt %q, the receipt of the delivery before it was dead-lettered", m2.Receipt)
	}
	if err := q.Ack(ctx, m1.Receipt); !errors.Is(err, ErrDeliveryLost) {
		t.Fatalf("Ack with the dead-lettered delivery's receipt = %v; want ErrDeliveryLost", err)
	}
}
