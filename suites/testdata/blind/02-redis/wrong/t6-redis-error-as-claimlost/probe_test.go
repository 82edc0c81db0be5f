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

func TestProbeCompleteRedisError(t *testing.T) {
	probeRun(t, func(t *testing.T, m *miniredis.Miniredis, newClient func() (*goredis.Client, *probeHook)) {
		c, h := newClient()
		s := New(c, Options{Prefix: "p:"})
		ctx := context.Background()
		cl, _, err := s.Claim(ctx, "t", "k", "fp")
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("probe: connection reset")
		h.before = func(ctx context.Context, cmd goredis.Cmder) error {
			if name := strings.ToLower(cmd.Name()); name == "eval" || name == "evalsha" || name == "set" || name == "get" {
				return boom
			}
			return nil
		}
		err = s.Complete(ctx, cl, "v")
		if !errors.Is(err, boom) || errors.Is(err, ErrClaimLost) {
			t.Fatalf("Complete with Redis failing: %v; want an error wrapping Redis's, not ErrClaimLost", err)
		}
	})
}
