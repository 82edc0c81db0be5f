package lease

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R4): every delivery gets a new token, "different from every token
// the queue issued before". A task queued again after its Ack must not get
// a token an earlier incarnation had, or that stale token acknowledges it.
func TestProbeTokensNeverRepeatAcrossIncarnations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{})
		q.Enqueue(ctx, Task{ID: "a"})
		l1, _ := q.Lease(ctx, "w1")
		if err := q.Ack(ctx, l1.Token); err != nil {
			t.Fatal(err)
		}
		q.Enqueue(ctx, Task{ID: "a"})
		l2, _ := q.Lease(ctx, "w2")
		if l2.Token == l1.Token {
			t.Errorf("second incarnation got token %q again", l2.Token)
		}
		if err := q.Ack(ctx, l1.Token); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Ack with the first incarnation's token: %v, want ErrLeaseLost", err)
		}
	})
}
