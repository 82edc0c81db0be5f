package backpressure

import (
	"context"
	"testing"
)

func TestProbeTicketNotZero(t *testing.T) {
	q := New(Options{Capacity: 4})
	ctx := context.Background()
	q.Submit(ctx, "a", "k1", Task{ID: "1"})
	a, err := q.Take(ctx)
	if err != nil || a.Ticket == 0 {
		t.Errorf("first Take: ticket %d, err %v; want a non-zero ticket", a.Ticket, err)
	}
}
