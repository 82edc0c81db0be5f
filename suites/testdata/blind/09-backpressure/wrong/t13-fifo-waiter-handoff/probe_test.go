package backpressure

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeFreedPlaceAdmitsYoungerWaiterOfOtherTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1, MaxWait: time.Minute})
		ctx := context.Background()
		if err := q.Submit(ctx, "b", "b1", Task{}); err != nil {
			t.Fatal(err)
		}
		if err := q.Submit(ctx, "a", "a1", Task{}); err != nil {
			t.Fatal(err)
		}
		older := make(chan error, 1)
		go func() { older <- q.Submit(ctx, "a", "a2", Task{}) }()
		synctest.Wait()
		time.Sleep(time.Second)
		younger := make(chan error, 1)
		go func() { younger <- q.Submit(ctx, "c", "c1", Task{}) }()
		synctest.Wait()
		if _, err := q.Take(ctx); err != nil { // frees b1's place; a's share is still full
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-younger:
			if err != nil {
				t.Fatalf("younger waiter of tenant c: %v, want admitted", err)
			}
		default:
			t.Error("the freed place did not admit the younger waiter of another tenant at once")
			<-younger
		}
		<-older
	})
}
