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

// R6: a failed claim gives the place back at once: a Submit waiting for it is admitted.
func TestProbeFailedClaimWakesWaiter(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		c := &claims{hold: make(chan struct{}), fail: map[string]error{"dup": errors.New("key already claimed")}}
		q := New(Options{Capacity: 1, MaxWait: time.Minute, Claimer: c})
		ctx := context.Background()
		dup := submitAsync(q, ctx, "t", "dup")
		fakeclock.Wait()
		waiter := submitAsync(q, ctx, "t", "x")
		fakeclock.Wait()
		close(c.hold) // dup's claim fails
		fakeclock.Wait()
		if err := <-dup; err == nil {
			t.Fatal("dup admitted")
		}
		select {
		case err := <-waiter:
			if err != nil {
				t.Fatalf("waiter = %v, want admitted", err)
			}
		default:
			t.Fatal("the place given back by a failed claim did not admit the waiting Submit at once")
		}
	})
}
