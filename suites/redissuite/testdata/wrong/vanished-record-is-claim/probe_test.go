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

// README: "never run work without a claim"; Claim: "If the key is free, the
// caller now holds it".  Here the other owner's claim expires between B's
// SET NX and its read of the record.
func TestProbeNoWorkWithoutAClaim(t *testing.T) {
	m := miniredis.RunT(t)
	a := New(probeClient(t, m), probeOpts)
	ctx := context.Background()
	if _, _, err := a.Claim(ctx, "t", "k", "f"); err != nil {
		t.Fatal(err)
	}
	rb := probeClient(t, m)
	n := 0
	rb.AddHook(&probeHook{before: func(goredis.Cmder) {
		n++
		if n == 2 { // A's claim expires between B's 1st and 2nd command
			m.FastForward(probeOpts.ClaimTTL + time.Second)
		}
	}})
	b := New(rb, probeOpts)
	ran := 0
	_, err := b.Do(ctx, "t", "k", "f", okWork("v", &ran))
	if ran > 0 && err != nil {
		t.Fatalf("work ran but Do = %v: it ran without holding a claim", err)
	}
	if ran > 0 {
		if _, rec, err := a.Claim(ctx, "t", "k", "f"); err != nil || !rec.Done {
			t.Fatalf("work ran but its result is not stored (%+v, %v)", rec, err)
		}
	}
}
