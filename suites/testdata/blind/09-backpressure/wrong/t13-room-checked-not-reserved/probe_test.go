package backpressure

import (
	"context"
	"errors"
	"testing"
)

type gateClaimer struct {
	entered chan string
	release chan struct{}
}

func (c *gateClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.entered <- key
	<-c.release
	return nil
}

func TestProbeReservedPlaceCountsDuringClaim(t *testing.T) {
	cl := &gateClaimer{entered: make(chan string, 4), release: make(chan struct{})}
	q := New(Options{Capacity: 1, Claimer: cl})
	ctx := context.Background()
	first := make(chan error, 1)
	go func() { first <- q.Submit(ctx, "a", "k1", Task{}) }()
	<-cl.entered
	second := make(chan error, 1)
	go func() { second <- q.Submit(ctx, "b", "k2", Task{}) }()
	var err2 error
	select {
	case err2 = <-second:
	case k := <-cl.entered:
		close(cl.release)
		<-first
		<-second
		t.Fatalf("a second key %q was claimed while the only place was reserved", k)
	}
	close(cl.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err2, ErrQueueFull) {
		t.Fatalf("second submit: %v, want ErrQueueFull", err2)
	}
	if d := q.Stats().Depth; d != 1 {
		t.Fatalf("depth %d, want 1", d)
	}
}
