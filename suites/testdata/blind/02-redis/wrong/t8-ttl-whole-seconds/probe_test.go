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

func TestProbeClaimTTLToTheMillisecond(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		m, _ := fakeredis.Start(t)
		opts := Options{Prefix: "probe:", ClaimTTL: 1500 * time.Millisecond}
		a := probeProc(t, m, opts, nil)
		b := probeProc(t, m, opts, nil)
		ctx := context.Background()
		if _, _, err := a.Claim(ctx, "t", "k", "fp"); err != nil {
			t.Fatalf("claim: %v", err)
		}
		time.Sleep(1499 * time.Millisecond)
		if _, _, err := b.Claim(ctx, "t", "k", "fp"); !errors.Is(err, ErrInProgress) {
			t.Fatalf("at 1499ms of a 1500ms claim, a duplicate got %v, want ErrInProgress", err)
		}
		time.Sleep(2 * time.Millisecond)
		c, _, err := b.Claim(ctx, "t", "k", "fp")
		if err != nil || c.Token == "" {
			t.Fatalf("at 1501ms the key should be free: got %+v, %v", c, err)
		}
	})
}
