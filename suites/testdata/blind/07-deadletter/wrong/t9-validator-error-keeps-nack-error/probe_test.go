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

// The validator's error replaces an earlier Nack's as the last error
// (R6), and a task rejected on a later delivery keeps its count (R7).
func TestProbeValidatorErrorReplacesNackError(t *testing.T) {
	ctx := context.Background()
	reject := false
	q := mustNew(t, Options{MaxDeliveries: 5, Validate: func(Task) error {
		if reject {
			return errors.New("bad document")
		}
		return nil
	}})
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Nack(ctx, m.Receipt, errors.New("parser crashed")); err != nil {
		t.Fatal(err)
	}
	reject = true
	if m2, err := q.Receive(ctx, "c1"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("Receive = %v, %v; want ErrNoMessage (task rejected)", m2, err)
	}
	dl, err := q.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || dl[0].Reason != ReasonMalformed || dl[0].Deliveries != 1 || dl[0].LastError != "bad document" {
		t.Fatalf("List = %v; want a, malformed, 1 delivery, LastError \"bad document\"", dl)
	}
}
