package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (R6): LastError is the last failure recorded, "kept through later
// crashes, which record nothing".
func TestProbeCrashesRecordNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{MaxDeliveries: 2, VisibilityTimeout: 30 * time.Second})
		q.Enqueue(ctx, Task{ID: "a"})
		m, _ := q.Receive(ctx, "c1")
		q.Nack(ctx, m.Receipt, errors.New("parse error"))
		q.Receive(ctx, "c2") // crashes
		time.Sleep(time.Minute)
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].LastError != "parse error" {
			t.Errorf("dead letters %v, want LastError %q", dl, "parse error")
		}
	})
}
