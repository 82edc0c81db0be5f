package backpressure

import (
	"context"
	"errors"
	"sync"
	"testing"
)

type setClaimer struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *setClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[tenant+"\x00"+key] {
		return errors.New("duplicate key")
	}
	c.seen[tenant+"\x00"+key] = true
	return nil
}

func TestProbeRefusedJobLeavesKeyUnclaimed(t *testing.T) {
	c := &setClaimer{seen: map[string]bool{}}
	q := New(Options{Capacity: 1, Claimer: c})
	ctx := context.Background()
	if err := q.Submit(ctx, "a", "k1", Task{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(ctx, "b", "k2", Task{}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("want ErrQueueFull, got %v", err)
	}
	q.Take(ctx)
	if err := q.Submit(ctx, "b", "k2", Task{}); err != nil {
		t.Errorf("retry of a refused job: %v, want admitted", err)
	}
}
