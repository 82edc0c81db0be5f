package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R3): every delivery has "a receipt no other delivery had", also
// after a redrive restarted the count.
func TestProbeReceiptsNeverRepeatAfterRedrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 1})
		q.Enqueue(ctx, Task{ID: "a"})
		m1, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m1.Receipt, errors.New("boom"))
		q.Redrive(ctx, "a")
		m2, _ := q.Receive(ctx, "c2")
		if m2.Receipt == m1.Receipt {
			t.Errorf("delivery after the redrive reused receipt %q", m1.Receipt)
		}
		if err := q.Ack(ctx, m1.Receipt); !errors.Is(err, ErrDeliveryLost) {
			t.Errorf("Ack with the pre-redrive receipt: %v, want ErrDeliveryLost", err)
		}
	})
}
