package backpressure

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeWakeupDoesNotRestartMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1, MaxWait: 10 * time.Second})
		ctx := context.Background()
		if err := q.Submit(ctx, "b", "b1", Task{}); err != nil {
			t.Fatal(err)
		}
		if err := q.Submit(ctx, "a", "a1", Task{}); err != nil {
			t.Fatal(err)
		}
		res := make(chan error, 1)
		go func() { res <- q.Submit(ctx, "a", "a2", Task{}) }()
		synctest.Wait()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if _, err := q.Take(ctx); err != nil { // frees b's place: a's share still full
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-res:
			t.Fatalf("waiter returned early: %v", err)
		default:
		}
		time.Sleep(5 * time.Second) // 10 s since the waiter started
		synctest.Wait()
		select {
		case err := <-res:
			if !errors.Is(err, ErrTenantFull) {
				t.Fatalf("after MaxWait: %v, want ErrTenantFull", err)
			}
		default:
			t.Fatal("waiter still waiting 10 s after its start: the wakeup started its MaxWait again")
			<-res
		}
	})
}
