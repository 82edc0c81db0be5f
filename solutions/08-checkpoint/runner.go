package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Runner runs multi-step tasks from their last checkpoint. It holds one
// fencing token, the token of its grant of the task it runs, and every
// checkpoint it commits carries it. A Runner runs one task at a time (do not
// call Run again before it returns); Progress may be called at any time,
// from any goroutine. Build it with NewRunner.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rand  func() uint64

	// mu guards progress only. It is never held while Run calls the
	// store, the sink or a step, so Progress answers at once even while a
	// step's effect is slow.
	mu       sync.Mutex
	progress Progress
}

// NewRunner returns a runner that commits to opts.Store, applies effects
// to opts.Sink and fences its checkpoints with opts.Token. A nil Store or
// Sink, or a zero Token, is an error wrapping ErrInvalidRunner. A nil Now
// means time.Now, a nil Rand means math/rand/v2's Uint64.
func NewRunner(opts Options) (*Runner, error) {
	switch {
	case opts.Store == nil:
		return nil, fmt.Errorf("new runner: no checkpoint store: %w", ErrInvalidRunner)
	case opts.Sink == nil:
		return nil, fmt.Errorf("new runner: no effect sink: %w", ErrInvalidRunner)
	case opts.Token == 0:
		return nil, fmt.Errorf("new runner: token 0 (never granted): %w", ErrInvalidRunner)
	}
	r := &Runner{store: opts.Store, sink: opts.Sink, token: opts.Token, now: opts.Now, rand: opts.Rand}
	if r.now == nil {
		r.now = time.Now
	}
	if r.rand == nil {
		r.rand = rand.Uint64
	}
	return r, nil
}

// key returns the idempotency key of step i (from 0) of task taskID:
// "task-1/0", "task-1/1", ... It depends on nothing else (not the runner,
// not the attempt), so every run of the step, by any runner, sends the same
// key; and the "/" keeps it unique ("ab" step 1 is "ab/1", "a" step 11 is
// "a/11").
func key(taskID string, i int) string {
	return taskID + "/" + strconv.Itoa(i)
}

// Run runs the steps of taskID from its last checkpoint: the steps the
// checkpoint marks done are not run again. For each step in turn, Run
// computes its effect, commits the values the step drew (if it drew any
// new ones) before applying the effect, applies the effect under the step's
// key, and commits the checkpoint that marks the step done once the effect
// is durable. It returns nil when every step is done.
//
// Run stops at the first error, and returns it wrapped: a failed Load,
// Commit, Apply or step. A refused commit (ErrStaleToken), or a stored
// checkpoint whose token is higher than the runner's, means another runner
// owns the task now: Run stops at once, having applied nothing more. Run
// checks ctx before it starts and before each step; once a step's effect
// is applied, its checkpoint is committed even if ctx is done by then.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run %q: %w", taskID, err)
	}
	if taskID == "" {
		return fmt.Errorf("run: %w", ErrNoTaskID)
	}
	if len(steps) == 0 {
		return nil // nothing to do, and nothing to checkpoint
	}
	cp, found, err := r.store.Load(ctx, taskID)
	if err != nil {
		// Not knowing where the task stands is not "it has not started":
		// starting from step 0 here would run done steps again.
		return fmt.Errorf("run %q: load its checkpoint: %w", taskID, err)
	}
	if found && cp.Token > r.token {
		return fmt.Errorf("run %q with token %d: %w (its checkpoint has token %d)", taskID, r.token, ErrStaleToken, cp.Token)
	}
	cp.TaskID, cp.Token, cp.Total = taskID, r.token, len(steps)
	r.setProgress(func(p *Progress) {
		*p = Progress{TaskID: taskID, Total: len(steps), Completed: cp.Next, ResumedFrom: cp.Next, Running: true}
	})
	defer r.setProgress(func(p *Progress) { p.Running = false })

	for i := cp.Next; i < len(steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q before step %d: %w", taskID, i, err)
		}
		rec := &recorder{step: i, now: r.now, rand: r.rand}
		for _, v := range cp.Values {
			if v.Step == i {
				rec.replay = append(rec.replay, v)
			}
		}
		payload, err := steps[i].Effect(rec)
		if err != nil {
			return fmt.Errorf("run %q step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if len(rec.fresh) > 0 {
			// The values are about to shape an effect: make them durable
			// first, so that a run of this step after a crash replays them
			// and sends the same payload under the same key.
			cp.Values = append(cp.Values, rec.fresh...)
			if err := r.store.Commit(ctx, clone(cp)); err != nil {
				return fmt.Errorf("run %q step %d: record its values: %w", taskID, i, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q step %d: %w", taskID, i, err)
		}
		if err := r.sink.Apply(ctx, key(taskID, i), payload); err != nil {
			// The effect may or may not have happened: the checkpoint
			// stays where it is, and a later run applies it again under
			// the same key.
			return fmt.Errorf("run %q step %d (%s): apply: %w", taskID, i, steps[i].Name, err)
		}
		// The effect is durable: now, and only now, the step is done. The
		// caller giving up must not lose that, so the commit does not
		// inherit ctx's cancellation.
		cp.Next = i + 1
		if err := r.store.Commit(context.WithoutCancel(ctx), clone(cp)); err != nil {
			return fmt.Errorf("run %q step %d: commit: %w", taskID, i, err)
		}
		r.setProgress(func(p *Progress) { p.Completed = i + 1 })
	}
	return nil
}

// Progress returns how far the runner has taken its task: the task, its
// number of steps, the steps known to be committed, the step it resumed
// from, and whether Run is running. Before the first Run it is the zero
// Progress.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

func (r *Runner) setProgress(f func(*Progress)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.progress)
}

// clone returns cp with its own copy of Values, so that no two holders
// (the runner, the store, the KV, a caller of Load) share one slice.
func clone(cp Checkpoint) Checkpoint {
	cp.Values = slices.Clone(cp.Values)
	return cp
}

// recorder is one run of one step's Recorder: it hands back the values
// recorded for the step, in order, and draws (and keeps) new ones once
// those run out.
type recorder struct {
	step   int
	replay []RecordedValue // recorded values of this step not handed back yet
	fresh  []RecordedValue // values drawn in this run
	now    func() time.Time
	rand   func() uint64
}

func (r *recorder) next() (RecordedValue, bool) {
	if len(r.replay) == 0 {
		return RecordedValue{}, false
	}
	v := r.replay[0]
	r.replay = r.replay[1:]
	return v, true
}

// Now returns the step's recorded time, or the runner's clock on the
// step's first run.
func (r *recorder) Now() time.Time {
	if v, ok := r.next(); ok {
		return v.Time
	}
	t := r.now()
	r.fresh = append(r.fresh, RecordedValue{Step: r.step, Kind: RecordedTime, Time: t})
	return t
}

// Rand returns the step's recorded number, or a new one on the step's
// first run.
func (r *recorder) Rand() uint64 {
	if v, ok := r.next(); ok {
		return v.Rand
	}
	n := r.rand()
	r.fresh = append(r.fresh, RecordedValue{Step: r.step, Kind: RecordedRand, Rand: n})
	return n
}
