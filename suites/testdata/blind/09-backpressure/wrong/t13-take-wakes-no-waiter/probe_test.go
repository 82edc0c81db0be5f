package backpressure

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeTakeAdmitsWaiterAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 1, MaxWait: time.Minute})
		ctx := context.Background()
		if err := q.Submit(ctx, "a", "k1", Task{}); err != nil {
			t.Fatal(err)
		}
		res := make(chan error, 1)
		go func() { res <- q.Submit(ctx, "b", "k2", Task{}) }()
		time.Sleep(5 * time.Second)
		if _, err := q.Take(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-res:
			if err != nil {
				t.Fatalf("waiter: %v, want admitted", err)
			}
		default:
			t.Error("a place freed by Take did not admit the waiting Submit at once")
			<-res
		}
	})
}
