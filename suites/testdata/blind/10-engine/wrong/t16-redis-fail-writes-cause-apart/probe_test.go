package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

var errInjected = errors.New("injected: connection reset")

// failHook fails, while on, every command the backend sends except the
// scripts (EVALSHA/EVAL), before it reaches Redis.
type failHook struct{ on atomic.Bool }

func (h *failHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *failHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (h *failHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		switch cmd.Name() {
		case "evalsha", "eval", "hello", "client":
		default:
			if h.on.Load() {
				cmd.SetErr(errInjected)
				return errInjected
			}
		}
		return next(ctx, cmd)
	}
}

// A Fail whose operation returns an error has changed nothing: the job is
// still leased by the same lease, which can Fail again.
func TestProbeFailedFailChangesNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	h := &failHook{}
	rdb.AddHook(h)
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}); err != nil {
		t.Fatal(err)
	}
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	h.on.Store(true)
	ferr := r.Fail(ctx, l, errors.New("busy"))
	h.on.Store(false)
	in, err := r.Inspect(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if ferr == nil {
		// The operation went through whole: then it must have taken effect.
		if in.State != "queued" || in.LastError != "busy" {
			t.Fatalf("Fail returned nil but the job is %v", in)
		}
		return
	}
	if !errors.Is(ferr, errInjected) {
		t.Fatalf("Fail = %v, want the command's error wrapped", ferr)
	}
	if in.State != "leased" || in.Token != l.Token || in.LastError != "" || !in.Until.Equal(l.Expires) {
		t.Fatalf("Fail returned %v, yet the job changed: %v until %v", ferr, in, in.Until)
	}
	if err := r.Fail(ctx, l, errors.New("busy")); err != nil {
		t.Fatalf("retried Fail: %v", err)
	}
}
