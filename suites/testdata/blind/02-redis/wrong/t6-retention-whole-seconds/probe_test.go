package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
)

var (
	_ = errors.Is
	_ = strings.Repeat
	_ = time.Second
)

// probeHook lets a probe fail a command before it is sent, or act (stall,
// let another process in) right after one returned.
type probeHook struct {
	before func(ctx context.Context, cmd goredis.Cmder) error
	after  func(cmd goredis.Cmder)
}

func (h *probeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *probeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.before != nil {
			if err := h.before(ctx, cmd); err != nil {
				cmd.SetErr(err)
				return err
			}
		}
		err := next(ctx, cmd)
		if h.after != nil {
			h.after(cmd)
		}
		return err
	}
}

func (h *probeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// probeRun runs f in a fakeclock bubble with a fresh miniredis; newClient
// gives a new process's connection with its own hook.
func probeRun(t *testing.T, f func(t *testing.T, m *miniredis.Miniredis, newClient func() (*goredis.Client, *probeHook))) {
	fakeclock.Run(t, func(t *testing.T) {
		m, _ := fakeredis.Start(t)
		f(t, m, func() (*goredis.Client, *probeHook) {
			c := fakeredis.NewClient(t, m)
			h := &probeHook{}
			c.AddHook(h)
			return c, h
		})
	})
}

func probeWork(v string, ran *int) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		*ran++
		return v, nil
	}
}

func TestProbeRetentionMillis(t *testing.T) {
	probeRun(t, func(t *testing.T, m *miniredis.Miniredis, newClient func() (*goredis.Client, *probeHook)) {
		c, _ := newClient()
		s := New(c, Options{Prefix: "p:", Retention: 2500 * time.Millisecond})
		ctx := context.Background()
		var ran int
		if _, err := s.Do(ctx, "t", "k", "fp", probeWork("v", &ran)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2400 * time.Millisecond)
		_, rec, err := s.Claim(ctx, "t", "k", "fp")
		if err != nil || !rec.Done || rec.Result != "v" {
			t.Fatalf("2.4 s into a 2.5 s retention: Claim = %+v, %v; want the replay", rec, err)
		}
		time.Sleep(101 * time.Millisecond)
		cl, rec, err := s.Claim(ctx, "t", "k", "fp")
		if err != nil || rec.Done || cl.Token == "" {
			t.Fatalf("just after retention: Claim = %+v %+v, %v; want a new claim", cl, rec, err)
		}
	})
}
