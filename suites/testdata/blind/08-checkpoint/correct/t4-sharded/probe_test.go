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

// R11: once an effect is applied, its checkpoint is committed even if the context is done by then.
func TestProbeCheckpointSurvivesCancelAfterApply(t *testing.T) {
	kv, sk := newKV(), newSink()
	ctx, cancel := context.WithCancel(context.Background())
	sk.hook = func(string) { cancel() } // the caller gives up while the effect goes through
	err := runner(t, NewStore(kv), sk, 1, nil).Run(ctx, "t", []Step{plain("a"), plain("b")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled (steps remain)", err)
	}
	if got := kv.get("t"); got.Next != 1 {
		t.Fatalf("checkpoint %v after step 0's effect was applied; want Next 1", got)
	}
}

// R3: a nil Rand is math/rand/v2's Uint64, randomly seeded: two runners draw different numbers.
func TestProbeDefaultRandIsRandom(t *testing.T) {
	var got []uint64
	for i := range 2 {
		kv, sk := newKV(), newSink()
		r := runner(t, NewStore(kv), sk, 1, nil)
		step := Step{Name: "r", Effect: func(rec Recorder) (string, error) { got = append(got, rec.Rand()); return "r", nil }}
		if err := r.Run(context.Background(), fmt.Sprint("t", i), []Step{step}); err != nil {
			t.Fatal(err)
		}
	}
	if got[0] == got[1] {
		t.Fatalf("two runners with the default source drew the same number %d", got[0])
	}
}

type failingLoad struct{ CheckpointStore }

func (f failingLoad) Load(ctx context.Context, id string) (Checkpoint, bool, error) {
	return Checkpoint{}, false, errors.New("store unreachable")
}

// R9: a failed Load is returned wrapped, and never taken for a task with no checkpoint.
func TestProbeFailedLoadRunsNothing(t *testing.T) {
	kv, sk := newKV(), newSink()
	err := runner(t, failingLoad{NewStore(kv)}, sk, 1, nil).Run(context.Background(), "t", []Step{plain("a")})
	if err == nil || len(sk.callList()) != 0 {
		t.Fatalf("Run with a failing Load = %v, applied %q; want an error and nothing applied", err, sk.callList())
	}
}

// R8: when the loaded checkpoint carries a higher token than the runner's, Run stops at once
// with ErrStaleToken, no step computed or effect applied.
func TestProbeHigherLoadedTokenStopsAtOnce(t *testing.T) {
	kv, sk := newKV(), newSink()
	st := NewStore(kv)
	_ = st.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 9, Next: 0, Total: 2})
	err := runner(t, st, sk, 3, nil).Run(context.Background(), "t", []Step{plain("a"), plain("b")})
	if !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Run = %v, want ErrStaleToken", err)
	}
	if calls := sk.callList(); len(calls) != 0 {
		t.Fatalf("a runner with a stale token applied %q", calls)
	}
}

// R5: step i of task T is applied under the key T + "/" + i, and under no other key.
func TestProbeKeysAreTaskSlashIndex(t *testing.T) {
	kv, sk := newKV(), newSink()
	steps := []Step{plain("send"), {Name: "send", Effect: func(Recorder) (string, error) { return "send again", nil }}, plain("x")}
	if err := runner(t, NewStore(kv), sk, 1, nil).Run(context.Background(), "täsk", steps); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"täsk/0=do send", "täsk/1=send again", "täsk/2=do x"}
	if got := sk.callList(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Apply calls %q, want %q", got, want)
	}
}

// R6: ErrEffectMismatch is a failure: the service performed nothing for this payload, the step is not done.
func TestProbeMismatchIsNotDone(t *testing.T) {
	kv, sk := newKV(), newSink()
	sk.applied["t/0"] = "something else"
	err := runner(t, NewStore(kv), sk, 1, nil).Run(context.Background(), "t", []Step{plain("a"), plain("b")})
	if !errors.Is(err, ErrEffectMismatch) {
		t.Fatalf("Run = %v, want ErrEffectMismatch wrapped", err)
	}
	if got := kv.get("t"); got.Next != 0 || len(sk.callList()) != 1 {
		t.Fatalf("checkpoint %v, calls %q; want Next 0 and no further step", got, sk.callList())
	}
}

// R3: a nil Now means time.Now, read each time a step draws (not when the runner was built).
func TestProbeDefaultClockReadAtDraw(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		kv, sk := newKV(), newSink()
		r := runner(t, NewStore(kv), sk, 1, nil)
		fakeclock.Advance(5 * time.Minute)
		var drew time.Time
		step := Step{Name: "q", Effect: func(rec Recorder) (string, error) { drew = rec.Now(); return "q", nil }}
		if err := r.Run(context.Background(), "t", []Step{step}); err != nil {
			t.Fatal(err)
		}
		if !drew.Equal(fakeclock.Epoch.Add(5 * time.Minute)) {
			t.Fatalf("step drew %v, want %v (the time of the draw)", drew, fakeclock.Epoch.Add(5*time.Minute))
		}
	})
}

// R10: Completed counts the steps known to be committed, those done before the runner resumed included.
func TestProbeProgressCountsResumedSteps(t *testing.T) {
	kv, sk := newKV(), newSink()
	st := NewStore(kv)
	_ = st.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 1, Next: 2, Total: 4})
	r := runner(t, st, sk, 2, nil)
	var during Progress
	sk.hook = func(key string) {
		if key == "t/2" {
			during = r.Progress()
		}
	}
	if err := r.Run(context.Background(), "t", []Step{plain("a"), plain("b"), plain("c"), plain("d")}); err != nil {
		t.Fatal(err)
	}
	want := Progress{TaskID: "t", Total: 4, Completed: 2, ResumedFrom: 2, Running: true}
	if during != want {
		t.Fatalf("Progress during step 2 = %v, want %v", during, want)
	}
	if p := r.Progress(); p.Completed != 4 || p.Running {
		t.Fatalf("after Run: %v", p)
	}
}

// R10: Progress answers at once, even while a step's effect is in progress. (Real goroutines:
// a mutex wait is invisible to synctest; the 500 ms bound is only reached when the probe fails.)
func TestProbeProgressDuringSlowEffect(t *testing.T) {
	kv, sk := newKV(), newSink()
	entered, release := make(chan struct{}), make(chan struct{})
	sk.hook = func(string) { close(entered); <-release }
	r := runner(t, NewStore(kv), sk, 1, nil)
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), "t", []Step{plain("a")}) }()
	<-entered
	got := make(chan Progress, 1)
	go func() { got <- r.Progress() }()
	select {
	case p := <-got:
		if !p.Running || p.Completed != 0 || p.Total != 1 || p.TaskID != "t" {
			t.Errorf("Progress during the effect = %v", p)
		}
	case <-time.After(500 * time.Millisecond):
		t.Error("Progress blocked while a step's effect was in progress")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// R7: when a step runs again it gets *its* values back (each value kept with its step).
func TestProbeReplayIsPerStep(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		kv, sk := newKV(), newSink()
		st := NewStore(kv)
		steps := []Step{drawing("book"), drawing("quote")}
		sk.hook = func(key string) {
			if key == "t/1" && sk.failN == 0 && len(sk.callList()) == 1 {
				sk.failN = 1
			}
		}
		if err := runner(t, st, sk, 1, counter(100)).Run(context.Background(), "t", steps); err == nil {
			t.Fatal("Run with a lost Apply answer on step 1 returned nil")
		}
		fakeclock.Advance(time.Minute)
		if err := runner(t, st, sk, 2, counter(900)).Run(context.Background(), "t", steps); err != nil {
			t.Fatalf("resumed Run: %v", err)
		}
		calls := sk.callList()
		if len(calls) != 3 || calls[1] != calls[2] || calls[1] != "t/1=quote at 2000-01-01T00:00:00Z code 102" {
			t.Fatalf("Apply calls %q; want step 1's own values (code 102), repeated exactly", calls)
		}
		if cp := kv.get("t"); len(cp.Values) != 4 || cp.Values[2].Step != 1 || cp.Values[3].Rand != 102 {
			t.Fatalf("checkpoint %v; want each step's two values, with its step", cp)
		}
	})
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

// R1: the store keeps what was committed, not the caller's slice.
func TestProbeCommitCopiesValues(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	vals := []RecordedValue{{Step: 0, Kind: RecordedRand, Rand: 42}}
	if err := s.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 1, Next: 0, Total: 1, Values: vals}); err != nil {
		t.Fatal(err)
	}
	vals[0].Rand = 7
	cp, _, _ := s.Load(context.Background(), "t")
	if cp.Values[0].Rand != 42 {
		t.Fatalf("stored value %d after the caller changed its slice, want 42", cp.Values[0].Rand)
	}
	cp.Values[0].Rand = 9
	cp2, _, _ := s.Load(context.Background(), "t")
	if cp2.Values[0].Rand != 42 {
		t.Fatalf("stored value %d after the caller changed Load's slice, want 42", cp2.Values[0].Rand)
	}
}

// R1: the check and the write are one atomic step: no other commit lands between them.
// (Real goroutines: a goroutine waiting on a mutex is invisible to synctest. The 100 ms
// bound is the time commit 6 is given to land while commit 5 sits between its read and
// its write; a correct store makes it wait.)
func TestProbeCommitCheckAndWriteAtomic(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	read5, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	kv.getHook = func(string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(read5)
			<-release // commit 5 has read "no checkpoint" and stalls
		}
	}
	done5 := make(chan error, 1)
	go func() { done5 <- s.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 5, Next: 1, Total: 3}) }()
	<-read5
	done6 := make(chan error, 1)
	go func() { done6 <- s.Commit(context.Background(), Checkpoint{TaskID: "t", Token: 6, Next: 2, Total: 3}) }()
	got6 := false
	select {
	case <-done6:
		got6 = true
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done5
	if !got6 {
		<-done6
	}
	if got := kv.get("t"); got.Token != 6 {
		t.Fatalf("task ends at %v; want token 6 (token 5's write landed after 6's)", got)
	}
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
