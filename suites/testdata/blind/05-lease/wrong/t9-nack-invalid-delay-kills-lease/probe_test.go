package lease

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A Nack with a delay out of range is refused and changes nothing (R8).
func TestProbeInvalidNackChangesNothing(t *testing.T) {
	ctx := context.Background()
	q, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	l, err := q.Lease(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{-time.Nanosecond, MaxVisibilityTimeout + time.Nanosecond} {
		if err := q.Nack(ctx, l.Token, d); !errors.Is(err, ErrInvalidDuration) {
			t.Fatalf("Nack(%v) = %v; want ErrInvalidDuration", d, err)
		}
	}
	if got, err := q.Lease(ctx, "w2"); !errors.Is(err, ErrNoTask) {
		t.Fatalf("after refused Nacks, Lease = %v, %v; want ErrNoTask (task still leased)", got, err)
	}
	if err := q.Ack(ctx, l.Token); err != nil {
		t.Fatalf("after refused Nacks, Ack of the lease = %v; want nil (lease unchanged)", err)
	}
}
