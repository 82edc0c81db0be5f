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

func TestProbeValuesDurableBeforeEffect(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		sink := newProbeSink()
		lost := errors.New("connection reset after send")
		sink.hook = func(context.Context, string) error { return lost }
		r1 := mustRunner(t, Options{Store: st, Sink: sink, Token: 1, Rand: constRand(111)})
		if err := r1.Run(bg, "t", []Step{randStep("quote")}); !errors.Is(err, lost) {
			t.Fatalf("run 1: %v", err)
		}
		sink.mu.Lock()
		sink.hook = nil
		sink.mu.Unlock()
		time.Sleep(time.Hour)
		r2 := mustRunner(t, Options{Store: st, Sink: sink, Token: 2, Rand: constRand(222)})
		if err := r2.Run(bg, "t", []Step{randStep("quote")}); err != nil {
			t.Fatalf("run 2: %v (applies %v)", err, sink.applied())
		}
		if got := sink.applied(); len(got) != 2 || got[1] != "t/0=quote:111" {
			t.Fatalf("applies %v", got)
		}
	})
}

func TestProbeStepKeyHasSeparator(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		sink := newProbeSink()
		r := mustRunner(t, Options{Store: NewStore(newProbeKV()), Sink: sink, Token: 1})
		if err := r.Run(bg, "t1", []Step{plain("a"), plain("b")}); err != nil {
			t.Fatal(err)
		}
		if got := sink.applied(); len(got) != 2 || got[0] != "t1/0=a" || got[1] != "t1/1=b" {
			t.Fatalf("applies %v", got)
		}
	})
}

func TestProbeStepKeyIsIndex(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		sink := newProbeSink()
		r := mustRunner(t, Options{Store: NewStore(newProbeKV()), Sink: sink, Token: 1})
		if err := r.Run(bg, "t", []Step{plain("book"), plain("quote")}); err != nil {
			t.Fatalf("run: %v", err)
		}
		if got := sink.applied(); len(got) != 2 || got[0] != "t/0=book" || got[1] != "t/1=quote" {
			t.Fatalf("applies %v", got)
		}
	})
}

func TestProbeFailedLoadStops(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		kv := newProbeKV()
		boom := errors.New("kv down")
		kv.getErr = boom
		sink := newProbeSink()
		r := mustRunner(t, Options{Store: NewStore(kv), Sink: sink, Token: 1})
		if err := r.Run(bg, "t", []Step{plain("a")}); !errors.Is(err, boom) {
			t.Fatalf("run: %v", err)
		}
		if got := sink.applied(); len(got) != 0 {
			t.Fatalf("applied %v after a failed load", got)
		}
	})
}

func TestProbeHigherLoadedTokenStops(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		if err := st.Commit(bg, Checkpoint{TaskID: "t", Token: 9, Next: 0, Total: 2}); err != nil {
			t.Fatal(err)
		}
		sink := newProbeSink()
		computed := 0
		step := Step{Name: "s", Effect: func(Recorder) (string, error) { computed++; return "x", nil }}
		r := mustRunner(t, Options{Store: st, Sink: sink, Token: 5})
		if err := r.Run(bg, "t", []Step{step, step}); !errors.Is(err, ErrStaleToken) {
			t.Fatalf("run: %v", err)
		}
		if computed != 0 || len(sink.applied()) != 0 {
			t.Fatalf("computed %d, applied %v", computed, sink.applied())
		}
	})
}

func TestProbeCheckpointAfterCancelledEffect(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		sink := newProbeSink()
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		sink.hook = func(context.Context, string) error { cancel(); return nil }
		r := mustRunner(t, Options{Store: st, Sink: sink, Token: 1})
		if err := r.Run(ctx, "t", []Step{plain("a"), plain("b")}); !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v", err)
		}
		cp, ok, err := st.Load(bg, "t")
		if err != nil || !ok || cp.Next != 1 {
			t.Fatalf("checkpoint %v %v %v, want Next 1", cp, ok, err)
		}
	})
}

func TestProbeNoApplyAfterCancel(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		sink := newProbeSink()
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		step := Step{Name: "s", Effect: func(Recorder) (string, error) { cancel(); return "x", nil }}
		r := mustRunner(t, Options{Store: NewStore(newProbeKV()), Sink: sink, Token: 1})
		if err := r.Run(ctx, "t", []Step{step}); !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v", err)
		}
		if got := sink.applied(); len(got) != 0 {
			t.Fatalf("applied %v after cancel", got)
		}
	})
}

func TestProbeProgressAnswersDuringEffect(t *testing.T) {
	sink := newProbeSink()
	entered := make(chan struct{})
	release := make(chan struct{})
	sink.hook = func(context.Context, string) error { close(entered); <-release; return nil }
	r := mustRunner(t, Options{Store: NewStore(newProbeKV()), Sink: sink, Token: 1})
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(bg, "t", []Step{plain("a")}) }()
	<-entered
	got := make(chan Progress, 1)
	go func() { got <- r.Progress() }()
	select {
	case p := <-got:
		if !p.Running || p.TaskID != "t" || p.Total != 1 || p.Completed != 0 {
			t.Errorf("progress during effect: %v", p)
		}
	case <-time.After(500 * time.Millisecond):
		t.Errorf("Progress did not answer while the effect was in progress")
	}
	close(release)
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
}

func TestProbeCompletedIncludesResumed(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		if err := st.Commit(bg, Checkpoint{TaskID: "t", Token: 1, Next: 2, Total: 3}); err != nil {
			t.Fatal(err)
		}
		r := mustRunner(t, Options{Store: st, Sink: newProbeSink(), Token: 1})
		if err := r.Run(bg, "t", []Step{plain("a"), plain("b"), plain("c")}); err != nil {
			t.Fatal(err)
		}
		p := r.Progress()
		if p.Completed != 3 || p.ResumedFrom != 2 || p.Total != 3 || p.Running {
			t.Fatalf("progress %v", p)
		}
	})
}

func TestProbeEachStepDrawsItsOwn(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		sink := newProbeSink()
		r := mustRunner(t, Options{Store: st, Sink: sink, Token: 1, Rand: seqRand()})
		if err := r.Run(bg, "t", []Step{randStep("a"), randStep("b")}); err != nil {
			t.Fatal(err)
		}
		if got := sink.applied(); len(got) != 2 || got[0] != "t/0=a:1" || got[1] != "t/1=b:2" {
			t.Fatalf("applies %v", got)
		}
		cp, _, _ := st.Load(bg, "t")
		if len(cp.Values) != 2 || cp.Values[1].Step != 1 || cp.Values[1].Rand != 2 {
			t.Fatalf("values %v", cp.Values)
		}
	})
}

func TestProbeDefaultClockReadAtDraw(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		r := mustRunner(t, Options{Store: st, Sink: newProbeSink(), Token: 1})
		time.Sleep(5 * time.Minute)
		want := time.Now()
		step := Step{Name: "s", Effect: func(rec Recorder) (string, error) { return rec.Now().UTC().String(), nil }}
		if err := r.Run(bg, "t", []Step{step}); err != nil {
			t.Fatal(err)
		}
		cp, _, _ := st.Load(bg, "t")
		if len(cp.Values) != 1 || !cp.Values[0].Time.Equal(want) {
			t.Fatalf("values %v, want time %v", cp.Values, want)
		}
	})
}

func TestProbeDefaultRandDiffers(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		for _, id := range []string{"t1", "t2"} {
			r := mustRunner(t, Options{Store: st, Sink: newProbeSink(), Token: 1})
			if err := r.Run(bg, id, []Step{randStep("s")}); err != nil {
				t.Fatal(err)
			}
		}
		a, _, _ := st.Load(bg, "t1")
		b, _, _ := st.Load(bg, "t2")
		if len(a.Values) != 1 || len(b.Values) != 1 || a.Values[0].Rand == b.Values[0].Rand {
			t.Fatalf("two runners drew %v and %v", a.Values, b.Values)
		}
	})
}

func TestProbeCommitCopiesValues(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		cp := Checkpoint{TaskID: "t", Token: 1, Next: 0, Total: 1,
			Values: []RecordedValue{{Step: 0, Kind: RecordedRand, Rand: 42}}}
		if err := st.Commit(bg, cp); err != nil {
			t.Fatal(err)
		}
		cp.Values[0].Rand = 99
		got, _, _ := st.Load(bg, "t")
		if got.Values[0].Rand != 42 {
			t.Fatalf("stored value changed to %d", got.Values[0].Rand)
		}
	})
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

func TestProbeCommitCheckAndWriteOneStep(t *testing.T) {
	kv := newProbeKV()
	st := NewStore(kv)
	paused := make(chan struct{})
	resume := make(chan struct{})
	var once sync.Once
	kv.getHook = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(paused)
			<-resume
		}
	}
	e5 := make(chan error, 1)
	go func() { e5 <- st.Commit(bg, Checkpoint{TaskID: "t", Token: 5, Next: 1, Total: 3}) }()
	<-paused
	e6 := make(chan error, 1)
	go func() { e6 <- st.Commit(bg, Checkpoint{TaskID: "t", Token: 6, Next: 2, Total: 3}) }()
	// Give commit 6 every chance to run while 5 is paused (a correct store
	// makes it wait for the task's lock).
	select {
	case err := <-e6:
		e6 <- err
	case <-time.After(20 * time.Millisecond):
	}
	close(resume)
	<-e5
	if err := <-e6; err != nil {
		t.Fatalf("commit 6: %v", err)
	}
	cp, _, _ := st.Load(bg, "t")
	if cp.Token != 6 || cp.Next != 2 {
		t.Fatalf("task holds %v", cp)
	}
}

func TestProbeCorrectResumeAfterCrash(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		st := NewStore(newProbeKV())
		sink := newProbeSink()
		boom := errors.New("crash")
		steps := []Step{plain("book"), {Name: "quote", Effect: func(rec Recorder) (string, error) {
			return fmt.Sprint(rec.Now().Unix(), "/", rec.Rand()), nil
		}}, plain("send")}
		sink.hook = func(_ context.Context, key string) error {
			if key == "t/1" {
				return boom
			}
			return nil
		}
		r1 := mustRunner(t, Options{Store: st, Sink: sink, Token: 1, Rand: constRand(7)})
		if err := r1.Run(bg, "t", steps); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		sink.mu.Lock()
		sink.hook = nil
		sink.mu.Unlock()
		time.Sleep(time.Hour)
		r2 := mustRunner(t, Options{Store: st, Sink: sink, Token: 2, Rand: constRand(8)})
		if err := r2.Run(bg, "t", steps); err != nil {
			t.Fatal(err)
		}
		if err := r1.Run(bg, "t", steps); !errors.Is(err, ErrStaleToken) {
			t.Fatalf("zombie: %v", err)
		}
		if _, err := NewRunner(Options{Store: st, Sink: sink}); !errors.Is(err, ErrInvalidRunner) {
			t.Fatal(err)
		}
		if err := r2.Run(bg, "", steps); !errors.Is(err, ErrNoTaskID) {
			t.Fatal(err)
		}
	})
}
