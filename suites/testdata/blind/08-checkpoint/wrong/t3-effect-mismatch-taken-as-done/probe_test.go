package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = time.Second
var _ = fmt.Sprint

var bg = context.Background()

// probeKV is an in-memory KV that stores checkpoints as given (no copy).
type probeKV struct {
	mu      sync.Mutex
	m       map[string]Checkpoint
	getErr  error
	getHook func()
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]Checkpoint{}} }

func (k *probeKV) Get(ctx context.Context, id string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	k.mu.Lock()
	cp, ok := k.m[id]
	err, hook := k.getErr, k.getHook
	k.mu.Unlock()
	if err != nil {
		return Checkpoint{}, false, err
	}
	if hook != nil {
		hook()
	}
	return cp, ok, nil
}

func (k *probeKV) Put(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	k.m[cp.TaskID] = cp
	k.mu.Unlock()
	return nil
}

// probeSink is an idempotent effect sink that records every Apply.
type probeSink struct {
	mu    sync.Mutex
	done  map[string]string
	calls []string                                    // "key=payload"
	hook  func(ctx context.Context, key string) error // runs after performing; its error is returned
}

func newProbeSink() *probeSink { return &probeSink{done: map[string]string{}} }

func (s *probeSink) Apply(ctx context.Context, key, payload string) error {
	s.mu.Lock()
	s.calls = append(s.calls, key+"="+payload)
	if p, ok := s.done[key]; ok && p != payload {
		s.mu.Unlock()
		return fmt.Errorf("key %s: %w", key, ErrEffectMismatch)
	}
	s.done[key] = payload
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		return hook(ctx, key)
	}
	return nil
}

func (s *probeSink) applied() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func mustRunner(t *testing.T, o Options) *Runner {
	t.Helper()
	r, err := NewRunner(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func constRand(n uint64) func() uint64 { return func() uint64 { return n } }

func seqRand() func() uint64 {
	var mu sync.Mutex
	n := uint64(0)
	return func() uint64 { mu.Lock(); defer mu.Unlock(); n++; return n }
}

func plain(payload string) Step {
	return Step{Name: "plain", Effect: func(Recorder) (string, error) { return payload, nil }}
}

func randStep(name string) Step {
	return Step{Name: name, Effect: func(rec Recorder) (string, error) { return fmt.Sprint(name, ":", rec.Rand()), nil }}
}

func TestProbeMismatchIsAFailure(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		sink := newProbeSink()
		sink.done["t/0"] = "something else"
		r := mustRunner(t, Options{Store: st, Sink: sink, Token: 1})
		if err := r.Run(bg, "t", []Step{plain("mine")}); !errors.Is(err, ErrEffectMismatch) {
			t.Fatalf("run: %v", err)
		}
		if cp, ok, _ := st.Load(bg, "t"); ok && cp.Next != 0 {
			t.Fatalf("checkpoint %v after a mismatch", cp)
		}
	})
}
