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

// README: "Errors from Redis (an unreachable server, a timeout) are returned
// at once, wrapped with what the store was doing."  A read that times out is
// not an answer of "in progress".
func TestProbeReadErrorIsNotInProgress(t *testing.T) {
	m := miniredis.RunT(t)
	a := New(probeClient(t, m), probeOpts)
	ctx := context.Background()
	if _, _, err := a.Claim(ctx, "t", "k", "f"); err != nil {
		t.Fatal(err)
	}
	rb := probeClient(t, m)
	injected := errors.New("probe: i/o timeout")
	n, failed := 0, false
	rb.AddHook(&probeHook{fail: func(goredis.Cmder) error {
		n++
		if n >= 2 { // every command after the first times out
			failed = true
			return injected
		}
		return nil
	}})
	b := New(rb, probeOpts)
	_, _, err := b.Claim(ctx, "t", "k", "f")
	if failed && !errors.Is(err, injected) {
		t.Fatalf("Claim hit a Redis error but returned %v (not wrapping it)", err)
	}
}
