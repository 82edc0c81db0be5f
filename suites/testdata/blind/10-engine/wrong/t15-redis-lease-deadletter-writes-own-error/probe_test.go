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

// A job whose last delivery crashed is dead-lettered by the next Lease,
// with ReasonMaxDeliveries, and LastError keeps the last cause ever
// reported: "boom" when a failure was reported before, "" when none was.
func TestProbeCrashDeadLetterKeepsLastError(t *testing.T) {
	probeBackends(t, Options{MaxDeliveries: 2, VisibilityTimeout: 10 * time.Second}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		if _, err := b.Submit(ctx, probeJob("a", 1)); err != nil {
			t.Fatal(err)
		}
		l, err := b.Lease(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Fail(ctx, l, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Second)
		if _, err := b.Lease(ctx, "w"); err != nil {
			t.Fatal(err)
		}
		c.Add(10 * time.Second) // the last delivery crashed
		c.Add(time.Millisecond) // b becomes visible strictly after a's lease ended
		if _, err := b.Submit(ctx, probeJob("b", 1)); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ { // b crashes twice too
			if l, err := b.Lease(ctx, "w"); err != nil || l.Job.ID != "b" {
				t.Fatalf("Lease = %v, %v; want b", l, err)
			}
			c.Add(10 * time.Second)
		}
		if _, err := b.Lease(ctx, "w"); !errors.Is(err, ErrNoJob) {
			t.Fatalf("Lease = %v, want ErrNoJob", err)
		}
		for id, want := range map[string]string{"a": "boom", "b": ""} {
			info, err := b.Inspect(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if info.State != task.JobDead || info.Reason != task.ReasonMaxDeliveries || info.LastError != want {
				t.Fatalf("%s: %v, want dead, reason %q, last error %q", id, info, task.ReasonMaxDeliveries, want)
			}
		}
	})
}
