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

// The backend reads no clock but Options.Now: a submitted job is queued
// from the injected clock's instant (to the millisecond), and is leased at
// once on that clock, wherever the wall clock stands.
func TestProbeSubmitReadsInjectedClock(t *testing.T) {
	probeBackends(t, Options{}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		c.Add(1500 * time.Microsecond)
		if _, err := b.Submit(ctx, probeJob("a", 1)); err != nil {
			t.Fatal(err)
		}
		info, err := b.Inspect(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		want := time.Date(2000, 1, 1, 0, 0, 0, int(time.Millisecond), time.UTC)
		if !info.Until.Equal(want) {
			t.Fatalf("submitted job visible from %v, want %v (the injected clock, to the millisecond)", info.Until, want)
		}
		if l, err := b.Lease(ctx, "w"); err != nil || l.Job.ID != "a" {
			t.Fatalf("Lease = %v, %v; want a at once", l, err)
		}
	})
}
