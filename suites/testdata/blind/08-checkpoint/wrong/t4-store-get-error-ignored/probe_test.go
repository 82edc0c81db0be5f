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

// R2: when the Get of a commit fails, the store writes nothing and returns the error wrapped.
func TestProbeFailedGetWritesNothing(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	_ = s.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 9, Next: 2, Total: 3})
	boom := errors.New("kv down")
	kv.getErr = boom
	err := s.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 3, Next: 0, Total: 3})
	if !errors.Is(err, boom) {
		t.Fatalf("Commit with a failing Get = %v, want it wrapped", err)
	}
	if got := kv.get("t"); got.Token != 9 || kv.puts != 1 {
		t.Fatalf("after a failed Get: %v, %d puts; want token 9 untouched, 1 put", got, kv.puts)
	}
}
