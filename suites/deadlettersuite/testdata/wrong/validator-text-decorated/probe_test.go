package deadletter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Promise (R6, R7): a rejected task's LastError is "the validator's error
// text", exactly.
func TestProbeValidatorTextIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{Validate: func(Task) error { return errors.New("no recipient") }})
		q.Enqueue(ctx, Task{ID: "bad"})
		q.Receive(ctx, "c1")
		dl, _ := q.List(ctx)
		if len(dl) != 1 || dl[0].LastError != "no recipient" {
			t.Errorf("dead letters %v, want LastError %q", dl, "no recipient")
		}
	})
}
