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

// A job's ID is any non-empty string: one that happens to be the name of
// another key of the backend is a job like any other.
func TestProbeIDsNamedLikeOtherKeys(t *testing.T) {
	probeBackends(t, Options{}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		ids := []string{"first", "visible", "token", "queue", "jobs", "job:x"}
		for _, id := range ids {
			if ok, err := b.Submit(ctx, probeJob(id, 1)); !ok || err != nil {
				t.Fatalf("Submit(%q) = %v, %v; want true, nil", id, ok, err)
			}
		}
		seen := map[string]bool{}
		var last Token
		for range ids {
			l, err := b.Lease(ctx, "w")
			if err != nil {
				t.Fatalf("Lease: %v", err)
			}
			if l.Token <= last {
				t.Fatalf("token %d after %d", l.Token, last)
			}
			last = l.Token
			seen[l.Job.ID] = true
		}
		for _, id := range ids {
			if !seen[id] {
				t.Fatalf("job %q never leased", id)
			}
		}
	})
}
