package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeWakeupDoesNotRestartMaxWait(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 2, TenantLimit: 1, MaxWait: 10 * time.Second})
		ctx := context.Background()
		q.Submit(ctx, "b", "kb", Task{})
		q.Submit(ctx, "a", "ka", Task{})
		res := make(chan error, 1)
		go func() { res <- q.Submit(ctx, "a", "ka2", Task{}) }()
		fakeclock.Advance(5 * time.Second)
		if _, err := q.Take(ctx); err != nil { // frees b's place: no use to tenant a
			t.Fatal(err)
		}
		fakeclock.Advance(5 * time.Second)
		select {
		case err := <-res:
			if !errors.Is(err, ErrTenantFull) {
				t.Errorf("after MaxWait: %v, want ErrTenantFull", err)
			}
		default:
			t.Errorf("MaxWait (10 s from the Submit's start) passed and the Submit is still waiting")
		}
		fakeclock.Advance(time.Minute)
	})
}
