package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

var _ = strings.Repeat
var _ = errors.Is
var _ = time.Second

func probeClient(t *testing.T, m *miniredis.Miniredis) *goredis.Client {
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// probeHook runs before() ahead of every command the client sends, and
// fails a command when fail() says so.
type probeHook struct {
	before func(cmd goredis.Cmder)
	fail   func(cmd goredis.Cmder) error
}

func (h *probeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *probeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if n := cmd.Name(); n == "hello" || n == "client" || n == "ping" {
			return next(ctx, cmd) // connection set-up, not the store's commands
		}
		if h.before != nil {
			h.before(cmd)
		}
		if h.fail != nil {
			if err := h.fail(cmd); err != nil {
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}
func (h *probeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

var probeOpts = Options{Prefix: "probe:", ClaimTTL: 10 * time.Second, Retention: time.Hour}

func okWork(v string, ran *int) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { *ran++; return v, nil }
}

// README: "Release deletes the pending record under the same condition
// [only if the stored record still carries this claim's token] ... The check
// and the write must be one step on the server (a Lua script)."
func TestProbeReleaseStallBetweenCommands(t *testing.T) {
	m := miniredis.RunT(t)
	ra, rb := probeClient(t, m), probeClient(t, m)
	a, b := New(ra, probeOpts), New(rb, probeOpts)
	ctx := context.Background()
	ca, _, err := a.Claim(ctx, "t", "k", "f")
	if err != nil {
		t.Fatal(err)
	}
	inRelease, n, fired := false, 0, false
	var cb Claim
	ra.AddHook(&probeHook{before: func(goredis.Cmder) {
		if !inRelease {
			return
		}
		n++
		if n == 2 && !fired { // A stalls between its 1st and 2nd command
			fired = true
			m.FastForward(probeOpts.ClaimTTL + time.Second)
			cb, _, err = b.Claim(ctx, "t", "k", "f")
			if err != nil {
				t.Errorf("B could not claim the expired key: %v", err)
			}
		}
	}})
	inRelease = true
	rerr := a.Release(ctx, ca)
	inRelease = false
	if !fired {
		t.Skip("release used a single command")
	}
	if !errors.Is(rerr, ErrClaimLost) {
		t.Errorf("stale A's Release = %v, want ErrClaimLost", rerr)
	}
	if err := b.Complete(ctx, cb, "b"); err != nil {
		t.Fatalf("B's claim was destroyed by stale A's Release: Complete = %v", err)
	}
}
