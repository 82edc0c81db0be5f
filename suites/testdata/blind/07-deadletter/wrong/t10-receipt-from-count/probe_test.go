package deadletter

import (
	"context"
	"errors"
	"testing"
)

// Every delivery has a receipt no other delivery had, also after a redrive
// resets the count; the old receipt acknowledges nothing.
func TestProbeReceiptsNeverRepeat(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{MaxDeliveries: 1})
	q.Enqueue(ctx, Task{ID: "a"})
	m1, _ := q.Receive(ctx, "c1")
	if err := q.Nack(ctx, m1.Receipt, errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	if err := q.Redrive(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	m2, err := q.Receive(ctx, "c2")
	if err != nil {
		t.Fatal(err)
	}
	if m1.Receipt == m2.Receipt {
		t.Fatalf("two deliveries share receipt %q", m1.Receipt)
	}
	if err := q.Ack(ctx, m1.Receipt); !errors.Is(err, ErrDeliveryLost) {
		t.Fatalf("Ack with the first delivery's receipt: %v", err)
	}
}
