package backpressure

import (
	"context"
	"testing"
	"time"
)

type heldClaimer struct {
	entered chan struct{}
	release chan struct{}
}

func (c *heldClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.entered <- struct{}{}
	<-c.release
	return nil
}

func TestProbeSlowClaimHoldsUpNoStats(t *testing.T) {
	cl := &heldClaimer{entered: make(chan struct{}), release: make(chan struct{})}
	q := New(Options{Capacity: 4, Claimer: cl})
	ctx := context.Background()
	subDone := make(chan error, 1)
	go func() { subDone <- q.Submit(ctx, "a", "k", Task{}) }()
	<-cl.entered
	statsDone := make(chan Stats, 1)
	go func() { statsDone <- q.Stats() }()
	select {
	case <-statsDone:
	case <-time.After(2 * time.Second):
		close(cl.release)
		<-subDone
		t.Fatal("Stats held up by a slow claim")
	}
	close(cl.release)
	if err := <-subDone; err != nil {
		t.Fatal(err)
	}
}
