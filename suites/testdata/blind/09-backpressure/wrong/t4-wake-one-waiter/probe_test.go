package backpressure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = math.MaxInt64
	_ = time.Second
	_ = fakeclock.Now
	_ sync.Mutex
)

// claims records every Claim; a key in fail fails; while hold is not nil,
// every Claim waits for it to be closed.
type claims struct {
	mu   sync.Mutex
	keys []string
	fail map[string]error
	hold chan struct{}
}

func (c *claims) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	c.keys = append(c.keys, tenant+"/"+key)
	err := c.fail[key]
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return err
}

func (c *claims) count() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.keys) }

func tk(id string) Task { return Task{ID: id, DocumentID: "doc-" + id} }

// submitAsync runs Submit in a goroutine; the channel gets its result.
func submitAsync(q *Queue, ctx context.Context, tenant, key string) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- q.Submit(ctx, tenant, key, tk(key)) }()
	return ch
}

// R4: a place freed admits at once a waiting Submit it has room for, whether or not another
// Submit, which it has no room for, has waited longer.
func TestProbeFreedPlaceAdmitsYoungerWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := New(Options{Capacity: 3, TenantLimit: 2, MaxWait: time.Minute})
		ctx := context.Background()
		for _, s := range [][2]string{{"c", "c1"}, {"a", "a1"}, {"a", "a2"}} {
			if err := q.Submit(ctx, s[0], s[1], tk(s[1])); err != nil {
				t.Fatal(err)
			}
		}
		older := submitAsync(q, ctx, "a", "a3") // its share is full too
		fakeclock.Advance(time.Second)
		younger := submitAsync(q, ctx, "b", "b1")
		fakeclock.Advance(time.Second)
		if a, _ := q.Take(ctx); a.Key != "c1" {
			t.Fatalf("took %v", a)
		}
		fakeclock.Wait()
		select {
		case err := <-younger:
			if err != nil {
				t.Fatalf("b1 = %v", err)
			}
		default:
			t.Fatal("the place c1 freed did not admit b1 at once (a3, waiting longer, cannot use it)")
		}
		select {
		case err := <-older:
			t.Fatalf("a3 returned %v, want still waiting", err)
		default:
		}
		fakeclock.Advance(time.Minute)
		<-older
	})
}
