package backpressure

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeFreedPlaceSkipsWaiterWithoutRoom(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1, MaxWait: time.Hour})
		ctx := context.Background()
		q.Submit(ctx, "b", "kb", Task{})
		q.Submit(ctx, "a", "ka", Task{})
		older := make(chan error, 1)
		go func() { older <- q.Submit(ctx, "a", "ka2", Task{}) }()
		fakeclock.Advance(time.Second)
		younger := make(chan error, 1)
		go func() { younger <- q.Submit(ctx, "c", "kc", Task{}) }()
		fakeclock.Advance(time.Second)
		if _, err := q.Take(ctx); err != nil { // frees b's place: tenant a cannot use it
			t.Fatal(err)
		}
		fakeclock.Wait()
		select {
		case err := <-younger:
			if err != nil {
				t.Errorf("younger waiter of tenant c: %v, want admitted", err)
			}
		default:
			t.Errorf("the freed place did not admit the younger waiter of another tenant at once")
		}
		fakeclock.Advance(2 * time.Hour)
	})
}
