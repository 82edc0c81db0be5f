package deadletter

import (
	"context"
	"errors"
	"testing"
)

// List returns a copy: changing it changes nothing in the queue.
func TestProbeListIsACopy(t *testing.T) {
	ctx := context.Background()
	q, _ := New(Options{MaxDeliveries: 1})
	q.Enqueue(ctx, Task{ID: "a", Subject: "contract"})
	m, _ := q.Receive(ctx, "c")
	q.Nack(ctx, m.Receipt, errors.New("boom"))
	l1, _ := q.List(ctx)
	if len(l1) != 1 {
		t.Fatalf("DLQ = %v", l1)
	}
	l1[0].Task.Subject = "changed"
	l1[0].LastError = "changed"
	l1[0].Deliveries = 99
	l2, _ := q.List(ctx)
	if l2[0].Task.Subject != "contract" || l2[0].LastError != "boom" || l2[0].Deliveries != 1 {
		t.Fatalf("changing List's result changed the DLQ: %v", l2)
	}
}
