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

func TestProbeNoLocalMemory(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		_, c := fakeredis.Start(t)
		s := New(c, Options{Prefix: "p:", Retention: time.Second})
		ctx := context.Background()
		s.Do(ctx, "t", "k", "fp", okWork("one"))
		time.Sleep(2 * time.Second)
		if v, err := s.Do(ctx, "t", "k", "fp", okWork("two")); v != "two" || err != nil {
			t.Errorf("after retention: (%q, %v), want work to run again", v, err)
		}
	})
}
