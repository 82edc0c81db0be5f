package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/task"
)

var (
	_ = errors.Is
	_ = fmt.Sprintf
	_ = provider.New
	_ = task.JobQueued
)

type probeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newProbeClock() *probeClock {
	return &probeClock{t: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
}
func (c *probeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *probeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func probeRedis(t *testing.T) (*miniredis.Miniredis, *goredis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return m, rdb
}

// probeBackends runs f on a memory backend and on a Redis backend.
func probeBackends(t *testing.T, o Options, f func(t *testing.T, b Backend, c *probeClock)) {
	t.Run("memory", func(t *testing.T) {
		c := newProbeClock()
		o := o
		o.Now = c.Now
		b, err := NewMemory(o)
		if err != nil {
			t.Fatal(err)
		}
		f(t, b, c)
	})
	t.Run("redis", func(t *testing.T) {
		c := newProbeClock()
		o := o
		o.Now = c.Now
		_, rdb := probeRedis(t)
		b, err := NewRedis(rdb, "probe", o)
		if err != nil {
			t.Fatal(err)
		}
		f(t, b, c)
	})
}

func probeJob(id string, n int) Job {
	j := Job{ID: id, Account: "acct"}
	for i := 0; i < n; i++ {
		j.Steps = append(j.Steps, Step{DocumentID: fmt.Sprintf("doc-%d", i), Recipient: fmt.Sprintf("r%d@example.com", i)})
	}
	return j
}

// Capacity 1, MaxDeliveries 1: job a's only lease ends without an outcome,
// the next Lease dead-letters it. A dead job takes no room: b is accepted.
func TestProbeDeadLetteredByLeaseFreesRoom(t *testing.T) {
	probeBackends(t, Options{Capacity: 1, MaxDeliveries: 1, VisibilityTimeout: time.Second}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		if _, err := b.Submit(ctx, probeJob("a", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Lease(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Second)
		if _, err := b.Lease(ctx, "w2"); !errors.Is(err, ErrNoJob) {
			t.Fatalf("Lease = %v, want ErrNoJob after dead-lettering a", err)
		}
		if info, _ := b.Inspect(ctx, "a"); info.State != task.JobDead {
			t.Fatalf("a: %v, want dead", info)
		}
		if ok, err := b.Submit(ctx, probeJob("b", 1)); !ok || err != nil {
			t.Fatalf("Submit(b) = %v, %v; want true, nil (a dead job takes no room)", ok, err)
		}
	})
}
