package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Correct alternative: the probe checks, through the public API only, a
// lost answer and a resume by another runner with replayed values, a
// zombie's refused commit, and concurrent commits to many tasks; it passes
// on this program and on the reference.
func TestProbeCorrectAlternative(t *testing.T) {
	kv, sink := newProbeKV(), newProbeSink()
	sink.fail = func(key string, n int) (error, bool) {
		if key == "t/1" && n == 2 {
			return errProbeSink, true // performed, answer lost
		}
		return nil, true
	}
	st := NewStore(kv)
	if c, ok := any(st).(interface{ Close() error }); ok {
		defer c.Close()
	}
	a := probeRunner(t, st, sink, 5, 1)
	if err := a.Run(context.Background(), "t", probeSteps(3, true)); !errors.Is(err, errProbeSink) {
		t.Fatalf("A: %v", err)
	}
	if p := a.Progress(); p != (Progress{TaskID: "t", Total: 3, Completed: 1}) {
		t.Fatalf("A's progress %+v", p)
	}
	b := probeRunner(t, st, sink, 6, 2)
	if err := b.Run(context.Background(), "t", probeSteps(3, true)); err != nil {
		t.Fatalf("B: %v", err)
	}
	if p := b.Progress(); p != (Progress{TaskID: "t", Total: 3, Completed: 3, ResumedFrom: 1}) {
		t.Fatalf("B's progress %+v", p)
	}
	cp, _ := kv.get("t")
	if cp.Next != 3 || cp.Token != 6 || len(cp.Values) != 6 {
		t.Fatalf("final checkpoint %v", cp)
	}
	if err := a.Run(context.Background(), "t", probeSteps(3, true)); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("zombie A: %v, want ErrStaleToken", err)
	}
	if err := st.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 5, Next: 1, Total: 3}); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("stale commit: %v", err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tok := FencingToken(1); tok <= 20; tok++ {
				if st.Commit(context.Background(), Checkpoint{TaskID: fmt.Sprintf("c%d", i), Token: tok, Next: int(tok), Total: 20}) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d commits refused", failed.Load())
	}
}

// ---- probe helpers (self-contained; no suite code) ----

// probeKV is a durable map that copies what it stores, with optional
// failures.
type probeKV struct {
	mu     sync.Mutex
	m      map[string]Checkpoint
	gets   int
	puts   int
	getErr func(n int) error // n counts Gets from 1
	putErr func(n int) error // n counts Puts from 1
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]Checkpoint{}} }

func (k *probeKV) Get(ctx context.Context, id string) (Checkpoint, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, fmt.Errorf("probe kv get: %w", err)
	}
	k.gets++
	if k.getErr != nil {
		if err := k.getErr(k.gets); err != nil {
			return Checkpoint{}, false, err
		}
	}
	cp, ok := k.m[id]
	cp.Values = slices.Clone(cp.Values)
	return cp, ok, nil
}

func (k *probeKV) Put(ctx context.Context, cp Checkpoint) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("probe kv put: %w", err)
	}
	k.puts++
	if k.putErr != nil {
		if err := k.putErr(k.puts); err != nil {
			return err
		}
	}
	cp.Values = slices.Clone(cp.Values)
	k.m[cp.TaskID] = cp
	return nil
}

func (k *probeKV) get(id string) (Checkpoint, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cp, ok := k.m[id]
	cp.Values = slices.Clone(cp.Values)
	return cp, ok
}

func (k *probeKV) put(cp Checkpoint) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cp.Values = slices.Clone(cp.Values)
	k.m[cp.TaskID] = cp
}

// probeSink is an effect service idempotent by key. It ignores ctx.
type probeSink struct {
	mu        sync.Mutex
	applied   map[string]string
	calls     []string
	performed int
	// fail, when it returns an error for a call (n counts calls from 1),
	// fails that call; perform says whether the effect happened anyway.
	fail func(key string, n int) (err error, perform bool)
	hook func(key string) // called before the effect, without the lock
}

func newProbeSink() *probeSink { return &probeSink{applied: map[string]string{}} }

var errProbeSink = errors.New("probe sink: service unavailable")

func (s *probeSink) Apply(ctx context.Context, key, payload string) error {
	if s.hook != nil {
		s.hook(key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, key)
	var ferr error
	perform := true
	if s.fail != nil {
		ferr, perform = s.fail(key, len(s.calls))
		if ferr == nil {
			perform = true
		}
	}
	if perform {
		if old, ok := s.applied[key]; ok {
			if old != payload {
				return fmt.Errorf("probe sink %q: %w", key, ErrEffectMismatch)
			}
		} else {
			s.applied[key] = payload
			s.performed++
		}
	}
	return ferr
}

func (s *probeSink) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// probeSteps returns n steps; drawing steps ask for the time and a number.
func probeSteps(n int, draw bool) []Step {
	steps := make([]Step, n)
	for i := range steps {
		name := fmt.Sprintf("step-%d", i)
		steps[i] = Step{Name: name, Effect: func(rec Recorder) (string, error) {
			if !draw {
				return name, nil
			}
			t := rec.Now()
			r := rec.Rand()
			return fmt.Sprintf("%s at %d code %d", name, t.UnixNano(), r), nil
		}}
	}
	return steps
}

func probeCounter(base uint64) func() uint64 {
	var mu sync.Mutex
	n := base
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		n++
		return n
	}
}

func probeClock(start time.Time) func() time.Time {
	var mu sync.Mutex
	t := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

var probeT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func probeRunner(t *testing.T, st CheckpointStore, sink EffectSink, tok FencingToken, base uint64) *Runner {
	t.Helper()
	r, err := NewRunner(Options{Store: st, Sink: sink, Token: tok, Now: probeClock(probeT0.Add(time.Duration(base) * time.Hour)), Rand: probeCounter(base * 1000)})
	if err != nil {
		t.Fatalf("NewRunner: %v", err)
	}
	return r
}

var _ = synctest.Test
var _ = atomic.Int32{}
