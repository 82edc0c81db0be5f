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

func TestProbeRedisErrorNotDisguised(t *testing.T) {
	boom := errors.New("ERR injected failure")
	_, mk := setup(t, Options{Prefix: "p:"})
	h := &hook{name: "evalsha", fail: boom}
	s := mk(h)
	_, _, err := s.Claim(context.Background(), "t", "k", "fp")
	if !errors.Is(err, boom) || errors.Is(err, ErrInProgress) {
		t.Fatalf("Claim = %v: must wrap Redis's error and not ErrInProgress", err)
	}
}
