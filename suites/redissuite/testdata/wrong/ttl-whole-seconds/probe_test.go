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

// Options.ClaimTTL: "how long a pending claim lasts"; Claim: "The claim
// expires after Options.ClaimTTL"; Retention: "how long a completed record is
// kept and replayed to duplicates".
func TestProbeSubSecondTTLsHonoured(t *testing.T) {
	m := miniredis.RunT(t)
	s := New(probeClient(t, m), Options{Prefix: "probe:", ClaimTTL: 1500 * time.Millisecond, Retention: 2500 * time.Millisecond})
	ctx := context.Background()
	if _, _, err := s.Claim(ctx, "t", "k", "f"); err != nil {
		t.Fatal(err)
	}
	m.FastForward(1200 * time.Millisecond)
	if _, _, err := s.Claim(ctx, "t", "k", "f"); !errors.Is(err, ErrInProgress) {
		t.Errorf("1.2s into a 1.5s claim: err = %v, want ErrInProgress", err)
	}
	ran := 0
	if _, err := s.Do(ctx, "t", "k2", "f", okWork("v", &ran)); err != nil {
		t.Fatal(err)
	}
	m.FastForward(2200 * time.Millisecond)
	if v, err := s.Do(ctx, "t", "k2", "f", okWork("again", &ran)); err != nil || v != "v" || ran != 1 {
		t.Errorf("2.2s into a 2.5s retention: Do = %q, %v, ran %d; want replay of v", v, err, ran)
	}
}
