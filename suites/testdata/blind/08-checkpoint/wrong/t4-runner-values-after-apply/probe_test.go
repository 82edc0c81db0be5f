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

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = fakeclock.Now
	_ = time.Second
)

// memKV is a KV in memory. It stores the Checkpoint value as given (as a
// real KV client would hand bytes over, the store must copy). getHook, when
// set, runs in every Get after the read; getErr fails Gets.
type memKV struct {
	mu      sync.Mutex
	m       map[string]Checkpoint
	getHook func(taskID string)
	getErr  error
	puts    int
}

func newKV() *memKV { return &memKV{m: map[string]Checkpoint{}} }

func (k *memKV) Get(ctx context.Context, id string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	k.mu.Lock()
	if k.getErr != nil {
		k.mu.Unlock()
		return Checkpoint{}, false, k.getErr
	}
	cp, ok := k.m[id]
	k.mu.Unlock()
	if h := k.getHook; h != nil {
		h(id) // after the read, before the caller hears
	}
	return cp, ok, nil
}

func (k *memKV) Put(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[cp.TaskID] = cp
	k.puts++
	return nil
}

func (k *memKV) get(id string) Checkpoint { k.mu.Lock(); defer k.mu.Unlock(); return k.m[id] }

// sink is an idempotent effect sink that records every Apply call.
type sink struct {
	mu      sync.Mutex
	applied map[string]string
	calls   []string // "key=payload"
	failN   int      // fail the next failN Applies (after performing them)
	hook    func(key string)
}

func newSink() *sink { return &sink{applied: map[string]string{}} }

func (s *sink) Apply(ctx context.Context, key, payload string) error {
	if h := s.hook; h != nil {
		h(key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, key+"="+payload)
	if old, ok := s.applied[key]; ok {
		if old != payload {
			return fmt.Errorf("apply %s: %w", key, ErrEffectMismatch)
		}
	} else {
		s.applied[key] = payload
	}
	if s.failN > 0 {
		s.failN--
		return errors.New("lost answer")
	}
	return nil
}

func (s *sink) callList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func counter(start uint64) func() uint64 {
	n := start
	return func() uint64 { n++; return n }
}

func plain(name string) Step {
	return Step{Name: name, Effect: func(Recorder) (string, error) { return "do " + name, nil }}
}

func drawing(name string) Step {
	return Step{Name: name, Effect: func(rec Recorder) (string, error) {
		return fmt.Sprintf("%s at %s code %d", name, rec.Now().UTC().Format(time.RFC3339Nano), rec.Rand()), nil
	}}
}

func runner(t *testing.T, st CheckpointStore, sk EffectSink, tok FencingToken, rnd func() uint64) *Runner {
	t.Helper()
	r, err := NewRunner(Options{Store: st, Sink: sk, Token: tok, Rand: rnd})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// R7: values drawn are committed (Next still at the step) before the effect is applied;
// a runner that resumes after a lost answer gets them back.
func TestProbeValuesDurableBeforeEffect(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		kv, sk := newKV(), newSink()
		st := NewStore(kv)
		sk.failN = 1 // the effect is performed, the answer lost
		steps := []Step{drawing("quote")}
		if err := runner(t, st, sk, 1, counter(100)).Run(context.Background(), "t", steps); err == nil {
			t.Fatal("Run with a lost Apply answer returned nil")
		}
		fakeclock.Advance(time.Hour)
		if err := runner(t, st, sk, 2, counter(900)).Run(context.Background(), "t", steps); err != nil {
			t.Fatalf("resumed Run: %v", err)
		}
		calls := sk.callList()
		if len(calls) != 2 || calls[0] != calls[1] {
			t.Fatalf("Apply calls %q; want the same payload twice (values replayed)", calls)
		}
	})
}
