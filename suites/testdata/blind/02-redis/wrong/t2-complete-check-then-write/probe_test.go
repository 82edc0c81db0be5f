package redis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

var _ = errors.Is
var _ = strings.Repeat
var _ sync.Mutex
var _ = time.Second

// hook runs before/after commands whose name matches.
type hook struct {
	mu    sync.Mutex
	name  string
	fail  error  // returned instead of running the command
	after func() // run once after the command
}

func (h *hook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *hook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (h *hook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.mu.Lock()
		match := h.name != "" && strings.EqualFold(cmd.Name(), h.name)
		fail, after := h.fail, h.after
		if match && after != nil {
			h.after = nil
		}
		h.mu.Unlock()
		if match && fail != nil {
			cmd.SetErr(fail)
			return fail
		}
		err := next(ctx, cmd)
		if match && after != nil {
			after()
		}
		return err
	}
}

func setup(t *testing.T, o Options) (*miniredis.Miniredis, func(h *hook) *Store) {
	m := miniredis.RunT(t)
	return m, func(h *hook) *Store {
		c := goredis.NewClient(&goredis.Options{Addr: m.Addr()})
		if h != nil {
			c.AddHook(h)
		}
		t.Cleanup(func() { c.Close() })
		return New(c, o)
	}
}

func ok(context.Context) (string, error) { return "ok", nil }

func TestProbeCompleteAtomic(t *testing.T) {
	ctx := context.Background()
	m, mk := setup(t, Options{Prefix: "p:", ClaimTTL: time.Second})
	h := &hook{}
	a, b := mk(h), mk(nil)
	ca, _, err := a.Claim(ctx, "t", "k", "fp")
	if err != nil {
		t.Fatal(err)
	}
	var cb Claim
	h.mu.Lock()
	h.name = "hmget"
	h.after = func() {
		m.FastForward(2 * time.Second)
		cb, _, _ = b.Claim(ctx, "t", "k", "fp")
	}
	h.mu.Unlock()
	errA := a.Complete(ctx, ca, "stale")
	if cb.Token == "" {
		// the store sent no HMGET: its Complete was one step; nothing to race
		if errA != nil {
			t.Fatalf("unraced Complete failed: %v", errA)
		}
		return
	}
	if errA == nil {
		t.Error("stale owner's Complete succeeded after its claim expired and was taken")
	}
	if err := b.Complete(ctx, cb, "fresh"); err != nil {
		t.Fatalf("new owner's Complete: %v", err)
	}
	if _, r, _ := b.Claim(ctx, "t", "k", "fp"); r.Result != "fresh" {
		t.Fatalf("stored %q", r.Result)
	}
}
