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

// probeBeforeWrite runs f once, just before the first transaction (or
// command) that writes a hash is sent: another process acting between a
// check and a write.
type probeBeforeWrite struct {
	once sync.Once
	f    func()
}

func (h *probeBeforeWrite) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *probeBeforeWrite) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() == "hset" {
			h.once.Do(h.f)
		}
		return next(ctx, cmd)
	}
}
func (h *probeBeforeWrite) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if c.Name() == "hset" {
				h.once.Do(h.f)
			}
		}
		return next(ctx, cmds)
	}
}

// Of a Complete and a Fail of one lease, exactly one succeeds, even when
// the Fail (from another process) lands while the Complete is under way.
func TestProbeCompleteAndFailOneWinner(t *testing.T) {
	c := newProbeClock()
	m, rdb1 := probeRedis(t)
	rdb2 := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb2.Close() })
	ctx := context.Background()
	b1, err := NewRedis(rdb1, "probe", Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := NewRedis(rdb2, "probe", Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b1.Submit(ctx, probeJob("a", 1)); err != nil {
		t.Fatal(err)
	}
	l, err := b1.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	var failErr error
	failed := false
	rdb1.AddHook(&probeBeforeWrite{f: func() {
		failed = true
		failErr = b2.Fail(ctx, l, errors.New("other process"))
	}})
	completeErr := b1.Complete(ctx, l)
	if !failed {
		failErr = b2.Fail(ctx, l, errors.New("other process"))
	}
	wins := 0
	for _, err := range []error{completeErr, failErr} {
		if err == nil {
			wins++
		} else if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("Complete = %v, Fail = %v: %d succeeded, want exactly one", completeErr, failErr, wins)
	}
	info, _ := b1.Inspect(ctx, "a")
	if (completeErr == nil) != (info.State == task.JobDone) {
		t.Fatalf("job %v does not match the winner", info)
	}
}
