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

type slowCause struct {
	entered, release chan struct{}
}

func (c *slowCause) Error() string {
	select {
	case <-c.entered:
	default:
		close(c.entered)
	}
	<-c.release
	return "slow failure"
}

// A move between the queue and the DLQ is atomic (R11): while a last
// delivery's Nack reads its cause's text, the task is in exactly one of
// the two, so a duplicate Enqueue of it is refused.
func TestProbeNackMoveHasNoGap(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{MaxDeliveries: 1})
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	cause := &slowCause{entered: make(chan struct{}), release: make(chan struct{})}
	nacked := make(chan error, 1)
	go func() { nacked <- q.Nack(ctx, m.Receipt, cause) }()
	<-cause.entered
	enqErr := q.Enqueue(ctx, Task{ID: "a", Subject: "copy"})
	close(cause.release)
	if err := <-nacked; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(enqErr, ErrDuplicateMessage) {
		t.Fatalf("Enqueue during the Nack's move = %v; want ErrDuplicateMessage", enqErr)
	}
	dl, err := q.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || dl[0].LastError != "slow failure" {
		t.Fatalf("List = %v; want a, LastError \"slow failure\"", dl)
	}
	if m2, err := q.Receive(ctx, "c2"); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("Receive = %v, %v; want ErrNoMessage (a is only in the DLQ)", m2, err)
	}
}
