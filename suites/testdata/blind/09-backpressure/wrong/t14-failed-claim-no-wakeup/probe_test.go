package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type failK1 struct{ release chan struct{} }

func (c *failK1) Claim(ctx context.Context, tenant, key string) error {
	if key == "k1" {
		<-c.release
		return errors.New("store down")
	}
	return nil
}

func TestProbeFailedClaimAdmitsWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &failK1{release: make(chan struct{})}
		q := New(Options{Capacity: 1, MaxWait: 10 * time.Second, Claimer: c})
		ctx := context.Background()
		first := make(chan error, 1)
		go func() { first <- q.Submit(ctx, "a", "k1", Task{}) }()
		fakeclock.Wait()
		second := make(chan error, 1)
		go func() { second <- q.Submit(ctx, "b", "k2", Task{}) }()
		fakeclock.Advance(time.Second)
		close(c.release)
		fakeclock.Wait()
		if err := <-first; err == nil {
			t.Fatal("failed claim: want an error")
		}
		select {
		case err := <-second:
			if err != nil {
				t.Errorf("waiter: %v, want admitted", err)
			}
		default:
			t.Errorf("the place given back by a failed claim did not admit the waiting Submit at once")
		}
		fakeclock.Advance(time.Minute)
	})
}
