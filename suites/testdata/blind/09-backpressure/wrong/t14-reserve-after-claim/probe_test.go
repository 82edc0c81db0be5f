package backpressure

import (
	"context"
	"errors"
	"sync"
	"testing"
)

type heldClaimer struct {
	called, release chan struct{}
	mu              sync.Mutex
	keys            []string
}

func (c *heldClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	c.keys = append(c.keys, key)
	c.mu.Unlock()
	if key == "k1" {
		close(c.called)
		<-c.release
	}
	return nil
}

func TestProbeReservedPlaceCounts(t *testing.T) {
	c := &heldClaimer{called: make(chan struct{}), release: make(chan struct{})}
	q := New(Options{Capacity: 1, Claimer: c})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- q.Submit(ctx, "a", "k1", Task{}) }()
	<-c.called
	err := q.Submit(ctx, "b", "k2", Task{})
	close(c.release)
	if e := <-done; e != nil {
		t.Fatalf("first submit: %v", e)
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Errorf("second submit while the only place is reserved by a claiming Submit: %v, want ErrQueueFull", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) != 1 {
		t.Errorf("claims %v, want only k1", c.keys)
	}
}
