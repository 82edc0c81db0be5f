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

func TestProbeDoKeepsValue(t *testing.T) {
	probeRun(t, func(t *testing.T, m *miniredis.Miniredis, newClient func() (*goredis.Client, *probeHook)) {
		c, _ := newClient()
		s := New(c, Options{Prefix: "p:", ClaimTTL: time.Second})
		ctx := context.Background()
		v, err := s.Do(ctx, "t", "k", "fp", func(context.Context) (string, error) {
			time.Sleep(2 * time.Second)
			return "v", nil
		})
		if v != "v" || !errors.Is(err, ErrClaimLost) {
			t.Fatalf("Do with work outliving its claim = %q, %v; want \"v\" with ErrClaimLost", v, err)
		}
	})
}
