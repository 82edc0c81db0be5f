package backpressure

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = math.MaxInt64
var _ = time.Second
var _ sync.Mutex

var bg = context.Background()

// probeClaimer records claims; hook, when set, runs first and its error
// fails the claim.
type probeClaimer struct {
	mu   sync.Mutex
	keys []string
	hook func(key string) error
}

func (c *probeClaimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	hook := c.hook
	c.mu.Unlock()
	if hook != nil {
		if err := hook(key); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, tenant+"/"+key)
	return nil
}

func (c *probeClaimer) claimed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

func sub(t *testing.T, q *Queue, tenant, key string) {
	t.Helper()
	if err := q.Submit(bg, tenant, key, Task{ID: key}); err != nil {
		t.Fatalf("submit %s/%s: %v", tenant, key, err)
	}
}

func take(t *testing.T, q *Queue) Admitted {
	t.Helper()
	a, err := q.Take(bg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestProbeOldestAgeIsHead(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 4, TenantLimit: 4})
		sub(t, q, "acme", "a")
		time.Sleep(10 * time.Second)
		sub(t, q, "acme", "b")
		time.Sleep(5 * time.Second)
		if s := q.Stats(); s.OldestAge != 15*time.Second {
			t.Fatalf("oldest age %v, want 15s", s.OldestAge)
		}
	})
}
