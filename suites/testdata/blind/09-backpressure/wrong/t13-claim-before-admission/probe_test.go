package backpressure

import (
	"context"
	"errors"
	"sync"
	"testing"
)

type countClaimer struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *countClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.seen[tenant+"\x00"+key]++
	if c.seen[tenant+"\x00"+key] > 1 {
		return errors.New("duplicate key")
	}
	return nil
}

func TestProbeRefusedJobClaimsNothing(t *testing.T) {
	cl := &countClaimer{}
	q := New(Options{Capacity: 1, Claimer: cl})
	ctx := context.Background()
	if err := q.Submit(ctx, "a", "k1", Task{}); err != nil {
		t.Fatal(err)
	}
	err := q.Submit(ctx, "b", "k2", Task{})
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("refused submit: %v, want ErrQueueFull", err)
	}
	if _, err := q.Take(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(ctx, "b", "k2", Task{}); err != nil {
		t.Fatalf("retry of refused key: %v, want admitted", err)
	}
	if n := cl.seen["b\x00k2"]; n != 1 {
		t.Fatalf("key claimed %d times, want 1", n)
	}
}
