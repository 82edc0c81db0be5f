package deadletter

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// Promise (R7): for a validator's panic, LastError is "a text that names the
// panic's value".
func TestProbePanicTextNamesTheValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{Validate: func(Task) error { panic("unparseable document 42") }})
		q.Enqueue(ctx, Task{ID: "bad"})
		q.Receive(ctx, "c1")
		dl, _ := q.List(ctx)
		if len(dl) != 1 || !strings.Contains(dl[0].LastError, "unparseable document 42") {
			t.Errorf("dead letters %v, want LastError naming the panic's value", dl)
		}
	})
}
