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

// Runner runs tasks from their last checkpoint.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rnd   func() uint64

	pmu  sync.RWMutex
	prog Progress
}

// NewRunner checks the options, one at a time.
func NewRunner(opts Options) (*Runner, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("%w: Store is nil", ErrInvalidRunner)
	}
	if opts.Sink == nil {
		return nil, fmt.Errorf("%w: Sink is nil", ErrInvalidRunner)
	}
	if opts.Token == 0 {
		return nil, fmt.Errorf("%w: Token is 0", ErrInvalidRunner)
	}
	r := &Runner{store: opts.Store, sink: opts.Sink, token: opts.Token, now: time.Now, rnd: rand.Uint64}
	if opts.Now != nil {
		r.now = opts.Now
	}
	if opts.Rand != nil {
		r.rnd = opts.Rand
	}
	return r, nil
}

// Progress returns a copy of the runner's progress.
func (r *Runner) Progress() Progress {
	r.pmu.RLock()
	defer r.pmu.RUnlock()
	return r.prog
}

func (r *Runner) update(f func(*Progress)) {
	r.pmu.Lock()
	f(&r.prog)
	r.pmu.Unlock()
}

type stepRecorder struct {
	r      *Runner
	step   int
	replay []RecordedValue
	pos    int
	fresh  []RecordedValue
}

func (s *stepRecorder) take() (RecordedValue, bool) {
	if s.pos < len(s.replay) {
		s.pos++
		return s.replay[s.pos-1], true
	}
	return RecordedValue{}, false
}

func (s *stepRecorder) Now() time.Time {
	if v, ok := s.take(); ok {
		return v.Time
	}
	v := RecordedValue{Step: s.step, Kind: RecordedTime, Time: s.r.now()}
	s.fresh = append(s.fresh, v)
	return v.Time
}

func (s *stepRecorder) Rand() uint64 {
	if v, ok := s.take(); ok {
		return v.Rand
	}
	v := RecordedValue{Step: s.step, Kind: RecordedRand, Rand: s.r.rnd()}
	s.fresh = append(s.fresh, v)
	return v.Rand
}

// Run runs the steps of taskID that its checkpoint does not mark done.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) error {
	if ctx.Err() != nil {
		return fmt.Errorf("run %s: %w", taskID, ctx.Err())
	}
	if taskID == "" {
		return fmt.Errorf("run: %w", ErrNoTaskID)
	}
	if len(steps) == 0 {
		return nil
	}
	loaded, ok, err := r.store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("run %s: %w", taskID, err)
	}
	start, values := 0, []RecordedValue(nil)
	if ok {
		if loaded.Token > r.token {
			return fmt.Errorf("run %s: %w", taskID, ErrStaleToken)
		}
		start, values = loaded.Next, slices.Clone(loaded.Values)
	}
	r.update(func(p *Progress) {
		*p = Progress{TaskID: taskID, Total: len(steps), Completed: start, ResumedFrom: start, Running: true}
	})
	defer r.update(func(p *Progress) { p.Running = false })

	commit := func(c context.Context, next int) error {
		return r.store.Commit(c, Checkpoint{TaskID: taskID, Token: r.token, Next: next, Total: len(steps), Values: slices.Clone(values)})
	}
	for i := start; i < len(steps); i++ {
		if ctx.Err() != nil {
			return fmt.Errorf("run %s: step %d: %w", taskID, i, ctx.Err())
		}
		rec := &stepRecorder{r: r, step: i}
		for _, v := range values {
			if v.Step == i {
				rec.replay = append(rec.replay, v)
			}
		}
		payload, err := steps[i].Effect(rec)
		if err != nil {
			return fmt.Errorf("run %s: step %d: %w", taskID, i, err)
		}
		if len(rec.fresh) != 0 {
			values = append(values, rec.fresh...)
			if err := commit(ctx, i); err != nil {
				return fmt.Errorf("run %s: step %d: values: %w", taskID, i, err)
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("run %s: step %d: %w", taskID, i, ctx.Err())
		}
		if err := r.sink.Apply(ctx, taskID+"/"+strconv.Itoa(i), payload); err != nil {
			return fmt.Errorf("run %s: step %d: %w", taskID, i, err)
		}
		if err := commit(context.WithoutCancel(ctx), i+1); err != nil {
			return fmt.Errorf("run %s: step %d: %w", taskID, i, err)
		}
		r.update(func(p *Progress) { p.Completed = i + 1 })
	}
	return nil
}
