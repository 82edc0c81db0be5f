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

// README: "Claim ... claims the key for the tenant, with one Redis command that
// creates the record only if it does not exist and gives it an expiry of
// Options.ClaimTTL."  A process that dies after its first command must not
// leave a key without a TTL.
func TestProbeCrashAfterFirstCommandLeavesTTL(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := probeClient(t, m)
	sent := 0
	rdb.AddHook(&probeHook{fail: func(goredis.Cmder) error {
		sent++
		if sent > 1 {
			return errors.New("probe: process crashed")
		}
		return nil
	}})
	s := New(rdb, probeOpts)
	_, _, _ = s.Claim(context.Background(), "t", "k", "f")
	for _, k := range m.Keys() {
		if m.TTL(k) <= 0 {
			t.Fatalf("key %q written by the crashed process has no TTL: locked forever", k)
		}
	}
}
