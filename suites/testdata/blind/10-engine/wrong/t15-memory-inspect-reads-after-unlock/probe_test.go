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

// Inspect beside Lease: every operation is atomic with respect to every
// other, so an Inspect running alongside a Lease of the same job reads
// nothing the Lease writes concurrently (the race detector checks).
func TestProbeInspectBesideLease(t *testing.T) {
	c := newProbeClock()
	b, err := NewMemory(Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Submit(ctx, probeJob("a", 1)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	inspected := make(chan Info, 1)
	leased := make(chan Lease, 1)
	go func() {
		defer wg.Done()
		info, _ := b.Inspect(ctx, "a")
		inspected <- info
	}()
	go func() {
		defer wg.Done()
		time.Sleep(3 * time.Millisecond) // after the Inspect, with nothing ordering the two
		l, _ := b.Lease(ctx, "w")
		leased <- l
	}()
	wg.Wait()
	info, l := <-inspected, <-leased
	if l.Job.ID != "a" || l.Delivery != 1 {
		t.Fatalf("lease %v", l)
	}
	if info.State != task.JobQueued && info.State != task.JobLeased {
		t.Fatalf("inspect %v", info)
	}
}
