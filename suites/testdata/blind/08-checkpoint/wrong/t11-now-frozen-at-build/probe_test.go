package checkpoint

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = fakeclock.Now
var _ = time.Second
var _ = errors.New

// probeKV keeps the very slice it is given, like an in-memory KV.
type probeKV struct {
	mu     sync.Mutex
	m      map[string]Checkpoint
	getErr error
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]Checkpoint{}} }

func (k *probeKV) Get(ctx context.Context, id string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.getErr != nil {
		return Checkpoint{}, false, k.getErr
	}
	cp, ok := k.m[id]
	return cp, ok, nil
}

func (k *probeKV) Put(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[cp.TaskID] = cp
	return nil
}

func (k *probeKV) snapshot(id string) (Checkpoint, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cp, ok := k.m[id]
	return cp, ok
}

type applied struct{ key, payload string }

// probeSink is idempotent by key and records what it performed.
type probeSink struct {
	mu    sync.Mutex
	done  map[string]string
	calls []applied
	hook  func(ctx context.Context, key string) error // called before performing
}

func newProbeSink() *probeSink { return &probeSink{done: map[string]string{}} }

func (s *probeSink) Apply(ctx context.Context, key, payload string) error {
	s.mu.Lock()
	s.calls = append(s.calls, applied{key, payload})
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, key); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.done[key]; ok {
		if p != payload {
			return ErrEffectMismatch
		}
		return nil
	}
	s.done[key] = payload
	return nil
}

func (s *probeSink) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		out = append(out, c.key)
	}
	return out
}

func plainSteps(n int) []Step {
	steps := make([]Step, n)
	for i := range steps {
		i := i
		steps[i] = Step{Name: "s", Effect: func(rec Recorder) (string, error) { return "p" + string(rune('0'+i)), nil }}
	}
	return steps
}

func mustRunner(t *testing.T, o Options) *Runner {
	t.Helper()
	r, err := NewRunner(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestProbeDefaultClockReadAtDraw(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		r := mustRunner(t, Options{Store: NewStore(newProbeKV()), Sink: newProbeSink(), Token: 1})
		fakeclock.Advance(7 * time.Minute)
		var got, want time.Time
		steps := []Step{{Name: "quote", Effect: func(rec Recorder) (string, error) {
			want = time.Now()
			got = rec.Now()
			return "q", nil
		}}}
		if err := r.Run(ctx, "t", steps); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("Recorder.Now gave %v, time.Now at the draw is %v", got, want)
		}
	})
}
