package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
	goredis "github.com/redis/go-redis/v9"
)

var _ = errors.New
var _ = strings.Repeat
var _ = time.Second
var _ *miniredis.Miniredis
var _ goredis.Hook

func okWork(v string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return v, nil }
}

// failAfter is a go-redis hook that lets n commands through and fails every
// later one with errCrash, as if the process died after its n-th command.
type failAfter struct {
	n    int
	seen int
	err  error
}

var errCrash = errors.New("probe: process crashed")

func (h *failAfter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *failAfter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.seen++
		if h.seen > h.n {
			e := h.err
			if e == nil {
				e = errCrash
			}
			cmd.SetErr(e)
			return e
		}
		return next(ctx, cmd)
	}
}
func (h *failAfter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

type stallAfterFirst struct {
	armed bool
	fired bool
	stall func()
}

func (h *stallAfterFirst) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *stallAfterFirst) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		if h.armed && !h.fired {
			h.fired = true
			h.stall()
		}
		return err
	}
}
func (h *stallAfterFirst) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

func TestProbeCompareAndSetIsOneStep(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		m, _ := fakeredis.Start(t)
		ctx := context.Background()
		ca := fakeredis.NewClient(t, m)
		h := &stallAfterFirst{}
		ca.AddHook(h)
		a := New(ca, Options{Prefix: "p:", ClaimTTL: time.Second})
		b := New(fakeredis.NewClient(t, m), Options{Prefix: "p:", ClaimTTL: time.Second})
		// Load the scripts once, so EVALSHA does not fall back to EVAL.
		pre, _, _ := a.Claim(ctx, "t", "warm", "fp")
		a.Release(ctx, pre)
		claimA, _, err := a.Claim(ctx, "t", "k", "fp")
		if err != nil {
			t.Fatal(err)
		}
		var bClaimed bool
		h.stall = func() {
			time.Sleep(2 * time.Second)
			cb, _, err := b.Claim(ctx, "t", "k", "fp")
			bClaimed = err == nil && cb.Token != ""
		}
		h.armed = true
		errA := a.Complete(ctx, claimA, "from-a")
		if bClaimed && !errors.Is(errA, ErrClaimLost) {
			t.Errorf("B claimed the key during A's stall, yet A's Complete returned %v (want ErrClaimLost)", errA)
		}
	})
}
