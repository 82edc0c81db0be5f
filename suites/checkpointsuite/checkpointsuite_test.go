package checkpointsuite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites/checkpointsuite"
	"github.com/fourth-outcome/labkit/task"
)

func TestLabIsValid(t *testing.T) {
	if err := checkpointsuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := checkpointsuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The suite must pass every correct runner, whatever its style. Besides the
// solution's store behind one mutex and its runner with a mutex for its
// progress:

// TestWriteAheadRunner runs the suite on a store in the Go actor style (one
// goroutine runs every KV call in turn, with a Close) and a runner that
// writes an intent record before every effect, whether or not the step drew
// values, and keeps its progress in an atomic pointer. It is the correct
// fixture testdata/correct/write-ahead-log, so go test checks it without the
// grader.
func TestWriteAheadRunner(t *testing.T) {
	checkpointsuite.Run(t, NewStore, NewRunner)
}

// The lab's names, as the lab's package re-exports them.
type (
	Checkpoint      = task.Checkpoint
	RecordedValue   = task.RecordedValue
	KV              = task.CheckpointKV
	CheckpointStore = task.CheckpointStore
	EffectSink      = task.EffectSink
	Step            = task.TaskStep
	Progress        = task.RunProgress
	Options         = task.RunnerOptions
	FencingToken    = task.FencingToken
)

const (
	RecordedTime = task.RecordedTime
	RecordedRand = task.RecordedRand
)

var (
	ErrStaleToken    = task.ErrStaleToken
	ErrInvalidRunner = task.ErrInvalidRunner
	ErrNoTaskID      = task.ErrNoTaskID
)

// Store is an actor: one goroutine runs every Load and Commit in turn, so
// a commit's check and write are one step without a mutex.
type Store struct {
	kv   KV
	reqs chan func()
	done chan struct{}
}

func NewStore(kv KV) *Store {
	s := &Store{kv: kv, reqs: make(chan func()), done: make(chan struct{})}
	go func() {
		for {
			select {
			case f := <-s.reqs:
				f()
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// Close stops the store's goroutine.
func (s *Store) Close() error {
	close(s.done)
	return nil
}

func (s *Store) do(f func()) {
	fin := make(chan struct{})
	s.reqs <- func() { f(); close(fin) }
	<-fin
}

func (s *Store) Load(ctx context.Context, taskID string) (cp Checkpoint, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	s.do(func() { cp, ok, err = s.kv.Get(ctx, taskID) })
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("wal store: load: %w", err)
	}
	cp.Values = slices.Clone(cp.Values) // the KV may hand out what it holds
	return cp, ok, nil
}

func (s *Store) Commit(ctx context.Context, cp Checkpoint) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.do(func() {
		var cur Checkpoint
		cur, _, err = s.kv.Get(ctx, cp.TaskID)
		switch {
		case err != nil:
			err = fmt.Errorf("wal store: %w", err)
		case cp.Token == 0 || cp.Token < cur.Token:
			err = fmt.Errorf("wal store: token %d, task has %d: %w", cp.Token, cur.Token, ErrStaleToken)
		default:
			cp.Values = slices.Clone(cp.Values) // the KV may keep what it is given
			err = s.kv.Put(ctx, cp)
		}
	})
	return err
}

// Runner checkpoints through a write-ahead record: before every effect,
// whether or not the step drew anything, it commits an intent (Next still
// at the step, the step's values in it), and after the effect the step's
// completion. Progress is an atomic pointer swapped on every move.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rnd   func() uint64
	prog  atomic.Pointer[Progress]
}

func NewRunner(o Options) (*Runner, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("wal runner: store: %w", ErrInvalidRunner)
	}
	if o.Sink == nil {
		return nil, fmt.Errorf("wal runner: sink: %w", ErrInvalidRunner)
	}
	if o.Token == 0 {
		return nil, fmt.Errorf("wal runner: token: %w", ErrInvalidRunner)
	}
	r := &Runner{store: o.Store, sink: o.Sink, token: o.Token, now: o.Now, rnd: o.Rand}
	if r.now == nil {
		r.now = time.Now
	}
	if r.rnd == nil {
		r.rnd = func() uint64 { return rand.Uint64() }
	}
	r.prog.Store(&Progress{})
	return r, nil
}

func (r *Runner) Progress() Progress { return *r.prog.Load() }

func (r *Runner) set(p Progress) { r.prog.Store(&p) }

type walRecorder struct {
	r        *Runner
	step     int
	log      []RecordedValue // the step's recorded values
	pos      int
	appended []RecordedValue
}

func (w *walRecorder) Now() time.Time {
	if w.pos < len(w.log) {
		w.pos++
		return w.log[w.pos-1].Time
	}
	v := RecordedValue{Step: w.step, Kind: RecordedTime, Time: w.r.now()}
	w.appended = append(w.appended, v)
	return v.Time
}

func (w *walRecorder) Rand() uint64 {
	if w.pos < len(w.log) {
		w.pos++
		return w.log[w.pos-1].Rand
	}
	v := RecordedValue{Step: w.step, Kind: RecordedRand, Rand: w.r.rnd()}
	w.appended = append(w.appended, v)
	return v.Rand
}

func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wal runner: %w", err)
	}
	if taskID == "" {
		return fmt.Errorf("wal runner: %w", ErrNoTaskID)
	}
	if len(steps) == 0 {
		return nil
	}
	cp, found, err := r.store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("wal runner: %w", err)
	}
	if found && cp.Token > r.token {
		return fmt.Errorf("wal runner: %w", ErrStaleToken)
	}
	p := Progress{TaskID: taskID, Total: len(steps), Completed: cp.Next, ResumedFrom: cp.Next, Running: true}
	r.set(p)
	defer func() { p.Running = false; r.set(p) }()
	for i := cp.Next; i < len(steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("wal runner: %w", err)
		}
		w := &walRecorder{r: r, step: i}
		for _, v := range cp.Values {
			if v.Step == i {
				w.log = append(w.log, v)
			}
		}
		payload, err := steps[i].Effect(w)
		if err != nil {
			return fmt.Errorf("wal runner: step %d: %w", i, err)
		}
		// The write-ahead record: always, values or not.
		values := append(append([]RecordedValue(nil), cp.Values...), w.appended...)
		intent := Checkpoint{TaskID: taskID, Token: r.token, Next: i, Total: len(steps), Values: values}
		if err := r.store.Commit(ctx, intent); err != nil {
			return fmt.Errorf("wal runner: intent %d: %w", i, err)
		}
		cp.Values = values
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("wal runner: %w", err)
		}
		if err := r.sink.Apply(ctx, taskID+"/"+strconv.Itoa(i), payload); err != nil {
			return fmt.Errorf("wal runner: apply %d: %w", i, err)
		}
		done := Checkpoint{TaskID: taskID, Token: r.token, Next: i + 1, Total: len(steps), Values: append([]RecordedValue(nil), values...)}
		if err := r.store.Commit(context.WithoutCancel(ctx), done); err != nil {
			return fmt.Errorf("wal runner: done %d: %w", i, err)
		}
		cp.Next = i + 1
		p.Completed = i + 1
		r.set(p)
	}
	return nil
}
