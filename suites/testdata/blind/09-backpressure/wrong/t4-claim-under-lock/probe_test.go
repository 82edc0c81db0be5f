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

// R5: a slow claim holds up no other Submit, Take or Stats. (Real goroutines, not a
// bubble: a goroutine blocked on a mutex is not durably blocked, so synctest could not
// see it; the 500 ms bound is only reached when the probe fails.)
func TestProbeSlowClaimHoldsUpNobody(t *testing.T) {
	entered := make(chan struct{})
	c := &enteringClaims{claims: claims{hold: make(chan struct{})}, entered: entered}
	q := New(Options{Capacity: 4, Claimer: c})
	ch := submitAsync(q, context.Background(), "t", "a")
	<-entered
	got := make(chan string, 1)
	go func() {
		_, err := q.Take(context.Background())
		err2 := q.Submit(context.Background(), "u", "b", tk("b")) // a second Submit, its claim not held
		got <- fmt.Sprintf("take empty: %v; depth %d; submit %v", errors.Is(err, ErrQueueEmpty), q.Stats().Depth, err2)
	}()
	select {
	case s := <-got:
		if s != "take empty: true; depth 1; submit <nil>" {
			t.Errorf("during a slow claim: %s", s)
		}
	case <-time.After(500 * time.Millisecond):
		t.Error("Take/Submit/Stats blocked while another Submit's claim was in progress")
	}
	close(c.hold)
	<-ch
}

type enteringClaims struct {
	claims
	once    sync.Once
	entered chan struct{}
}

func (c *enteringClaims) Claim(ctx context.Context, tenant, key string) error {
	if key == "a" {
		c.once.Do(func() { close(c.entered) })
		return c.claims.Claim(ctx, tenant, key)
	}
	return nil
}
