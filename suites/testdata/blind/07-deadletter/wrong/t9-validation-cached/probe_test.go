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

// The validator is called before each delivery of a task, not only its
// first (R7): a task it starts rejecting on a later delivery is
// dead-lettered then, with its count unchanged and the validator's words.
func TestProbeValidatedBeforeEachDelivery(t *testing.T) {
	ctx := context.Background()
	calls := 0
	q := mustNew(t, Options{MaxDeliveries: 5, Validate: func(Task) error {
		calls++
		if calls >= 3 {
			return errors.New("schema v2 only")
		}
		return nil
	}})
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		m, err := q.Receive(ctx, "c1")
		if err != nil || m.Deliveries != i {
			t.Fatalf("delivery %d: %v, %v", i, m, err)
		}
		if err := q.Nack(ctx, m.Receipt, errors.New("failed")); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := q.Receive(ctx, "c1"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("third Receive = %v, %v; want ErrNoMessage (rejected by the validator)", m, err)
	}
	dl, err := q.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(dl) != 1 || dl[0].Reason != ReasonMalformed || dl[0].Deliveries != 2 || dl[0].LastError != "schema v2 only" {
		t.Fatalf("validator calls %d, List = %v; want 3 calls and a malformed dead letter after 2 deliveries, \"schema v2 only\"", calls, dl)
	}
}
