package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
)

var (
	_ = errors.New
	_ = fmt.Sprintf
	_ = strings.Repeat
	_ sync.Mutex
	_ = time.Second
)

// probeHook lets a probe fail a command before it is sent, or act right
// after one was answered (a stalled connection, a crash).
type probeHook struct {
	before func(cmd goredis.Cmder) error
	after  func(cmd goredis.Cmder)
}

func (h *probeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *probeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if h.before != nil {
			if err := h.before(cmd); err != nil {
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

// probeProc is one simulated worker process: its own connection, its own Store.
func probeProc(t *testing.T, m *miniredis.Miniredis, opts Options, h *probeHook) *Store {
	c := fakeredis.NewClient(t, m)
	if h != nil {
		c.AddHook(h)
	}
	return New(c, opts)
}

func probeWork(v string, ran *int) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { *ran++; return v, nil }
}

func TestProbeColonPairsDiffer(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		m, _ := fakeredis.Start(t)
		s := probeProc(t, m, Options{Prefix: "probe:"}, nil)
		ctx := context.Background()
		ran := 0
		v1, err := s.Do(ctx, "t:x", "k", "fp", probeWork("first", &ran))
		if err != nil || v1 != "first" {
			t.Fatalf("Do 1 = %q, %v", v1, err)
		}
		v2, err := s.Do(ctx, "t", "x:k", "fp", probeWork("second", &ran))
		if err != nil {
			t.Fatalf("Do 2: %v", err)
		}
		if v2 != "second" || ran != 2 {
			t.Fatalf("(%q,%q) then (%q,%q): second Do got %q with %d works run; the pairs share one record", "t:x", "k", "t", "x:k", v2, ran)
		}
	})
}
