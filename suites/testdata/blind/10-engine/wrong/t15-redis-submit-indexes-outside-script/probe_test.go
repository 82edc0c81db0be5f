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

var errProbeInjected = errors.New("probe: injected failure")

// probeFailHook fails every command with the given name before it reaches
// Redis.
type probeFailHook struct{ name string }

func (h probeFailHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h probeFailHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() == h.name {
			cmd.SetErr(errProbeInjected)
			return errProbeInjected
		}
		return next(ctx, cmd)
	}
}
func (h probeFailHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// A Submit one of whose commands fails returns that error and leaves Redis
// unchanged: the retried Submit stores the job and it can be leased.
func TestProbeFailedSubmitChangesNothing(t *testing.T) {
	c := newProbeClock()
	m, rdb := probeRedis(t)
	_ = m
	ctx := context.Background()
	b, err := NewRedis(rdb, "probe", Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	// A second client (another process) whose ZADD commands fail.
	bad := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = bad.Close() })
	bad.AddHook(probeFailHook{name: "zadd"})
	bb, err := NewRedis(bad, "probe", Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Submit(ctx, probeJob("j", 1)); err == nil {
		// Nothing failed: the operation did not send a ZADD of its own.
	} else if !errors.Is(err, errProbeInjected) {
		t.Fatalf("Submit = %v, want the injected error wrapped", err)
	} else if _, err := b.Inspect(ctx, "j"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("after a failed Submit, Inspect = %v, want ErrUnknownJob (a failed operation changes nothing)", err)
	}
	if _, err := b.Submit(ctx, probeJob("j", 1)); err != nil {
		t.Fatal(err)
	}
	l, err := b.Lease(ctx, "w")
	if err != nil || l.Job.ID != "j" {
		t.Fatalf("Lease after the retried Submit = %v, %v; want job j", l, err)
	}
}
