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

// Do: "On success the result is stored and returned; if storing it fails
// (the claim was lost, or Redis is gone) Do returns the value together with
// that error."
func TestProbeDoReturnsValueWhenCompleteFails(t *testing.T) {
	m := miniredis.RunT(t)
	s, b := New(probeClient(t, m), probeOpts), New(probeClient(t, m), probeOpts)
	ctx := context.Background()
	v, err := s.Do(ctx, "t", "k", "f", func(context.Context) (string, error) {
		m.FastForward(probeOpts.ClaimTTL + time.Second)
		if _, _, err := b.Claim(ctx, "t", "k", "f"); err != nil {
			t.Errorf("B claim: %v", err)
		}
		return "signed-123", nil
	})
	if !errors.Is(err, ErrClaimLost) {
		t.Errorf("Do err = %v, want ErrClaimLost", err)
	}
	if v != "signed-123" {
		t.Fatalf("Do value = %q, want the work's value \"signed-123\" with the error", v)
	}
}
