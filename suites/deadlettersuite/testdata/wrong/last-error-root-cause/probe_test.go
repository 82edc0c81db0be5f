package deadletter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
)

// Promise (R6): LastError is "the exact Error() text of the last failure
// recorded: the last Nack's cause".
func TestProbeLastErrorIsTheCausesText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 1})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		cause := fmt.Errorf("parse contract-7: %w", io.ErrUnexpectedEOF)
		q.Nack(ctx, m.Receipt, cause)
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].LastError != cause.Error() {
			t.Errorf("dead letters %v, want LastError %q", dl, cause.Error())
		}
		_ = errors.New
	})
}
