package deadletter

import (
	"context"
	"errors"
	"sync"
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

// Every method is safe for concurrent use by any number of goroutines:
// an operator's List while a consumer's Nack dead-letters a task, under
// the race detector.
//
// The two goroutines are ordered by real sleeps only, which give the race
// detector no happens-before edge: whatever List reads without the lock
// races with the Nack's write.
func TestProbeListRacingNack(t *testing.T) {
	ctx := context.Background()
	q := mustNew(t, Options{MaxDeliveries: 1})
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	m, err := q.Receive(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var listErr, nackErr error
	var listed []DeadLetter
	wg.Add(2)
	go func() {
		defer wg.Done()
		listed, listErr = q.List(ctx)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		nackErr = q.Nack(ctx, m.Receipt, errors.New("boom"))
	}()
	wg.Wait()
	if listErr != nil || nackErr != nil || len(listed) != 0 {
		t.Fatalf("List = %v, %v; Nack = %v", listed, listErr, nackErr)
	}
	dl, err := q.List(ctx)
	if err != nil || len(dl) != 1 {
		t.Fatalf("List after = %v, %v; want a", dl, err)
	}
}
