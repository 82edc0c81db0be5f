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

// Step 0 is sent and checkpointed; step 1's reply is lost, so the job is
// failed for a retry. The next delivery resumes at the checkpoint: it sends
// steps 1 and 2 only, never step 0 again.
func TestProbeResumeAtCheckpoint(t *testing.T) {
	probeBackends(t, Options{}, func(t *testing.T, b Backend, c *probeClock) {
		ctx := context.Background()
		p := provider.New(provider.Options{ResponseTimeout: time.Millisecond})
		p.Script(provider.Pass().On(provider.OpSend), provider.LoseResponse().On(provider.OpSend))
		e := NewEngine(b, p)
		if _, err := b.Submit(ctx, probeJob("j", 3)); err != nil {
			t.Fatal(err)
		}
		if err := e.Work(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		info, _ := b.Inspect(ctx, "j")
		if info.State != task.JobQueued || info.Step != 1 {
			t.Fatalf("after the lost reply of step 1: %v, want queued at step 1", info)
		}
		before := p.Stats("acct").Sends
		c.Add(time.Hour)
		if err := e.Work(ctx, "w2"); err != nil {
			t.Fatal(err)
		}
		if info, _ := b.Inspect(ctx, "j"); info.State != task.JobDone {
			t.Fatalf("job: %v, want done", info)
		}
		if n := p.Stats("acct").Sends - before; n != 2 {
			t.Fatalf("the delivery that resumed at step 1 made %d Sends, want 2 (steps 1 and 2)", n)
		}
		if n := p.Received("r0@example.com"); n != 1 {
			t.Fatalf("step 0 delivered %d times", n)
		}
	})
}
