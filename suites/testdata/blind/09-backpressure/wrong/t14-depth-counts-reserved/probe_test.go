package backpressure

import (
	"context"
	"testing"
)

type holdClaimer struct{ called, release chan struct{} }

func (c *holdClaimer) Claim(ctx context.Context, tenant, key string) error {
	close(c.called)
	<-c.release
	return nil
}

func TestProbeDepthExcludesReserved(t *testing.T) {
	c := &holdClaimer{called: make(chan struct{}), release: make(chan struct{})}
	q := New(Options{Capacity: 4, Claimer: c})
	done := make(chan error, 1)
	go func() { done <- q.Submit(context.Background(), "a", "k", Task{}) }()
	<-c.called
	d := q.Stats().Depth
	close(c.release)
	<-done
	if d != 0 {
		t.Errorf("Depth during the claim = %d, want 0 (a reserved place is not a waiting job)", d)
	}
	if d2 := q.Stats().Depth; d2 != 1 {
		t.Errorf("Depth after the claim = %d, want 1", d2)
	}
}
