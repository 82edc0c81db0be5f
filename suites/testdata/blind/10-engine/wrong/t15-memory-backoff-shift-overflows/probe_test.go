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

// Forty failures in a row: every backoff is min(MaxBackoff, Base*2^(n-1)),
// exact, without overflowing at large n.
func TestProbeBackoffNoOverflow(t *testing.T) {
	probeBackends(t, Options{MaxDeliveries: 45, VisibilityTimeout: time.Hour}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		if _, err := b.Submit(ctx, probeJob("a", 1)); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 40; n++ {
			l, err := b.Lease(ctx, "w")
			if err != nil || l.Delivery != n {
				t.Fatalf("lease %d: %v, %v", n, l, err)
			}
			if err := b.Fail(ctx, l, errors.New("transient")); err != nil {
				t.Fatal(err)
			}
			want := 5 * time.Minute
			if n <= 9 {
				want = time.Second << (n - 1)
			}
			info, _ := b.Inspect(ctx, "a")
			if !info.Until.Equal(c.Now().Add(want)) {
				t.Fatalf("after failing delivery %d: visible at %v, want now+%v = %v", n, info.Until, want, c.Now().Add(want))
			}
			c.Add(want)
		}
	})
}
