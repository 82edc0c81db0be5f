package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Runner runs multi-step tasks from their last checkpoint.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rand  func() uint64

	mu   sync.Mutex
	prog Progress
}

// NewRunner returns a runner.
func NewRunner(opts Options) (*Runner, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("new runner: no store: %w", ErrInvalidRunner)
	}
	if opts.Sink == nil {
		return nil, fmt.Errorf("new runner: no sink: %w", ErrInvalidRunner)
	}
	if opts.Token == 0 {
		return nil, fmt.Errorf("new runner: zero token: %w", ErrInvalidRunner)
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

// recorder replays the values step recorded before, then draws new ones.
type recorder struct {
	r      *Runner
	step   int
	replay []RecordedValue
	drawn  []RecordedValue
}

func (rc *recorder) next(kind task.RecordedKind) (RecordedValue, bool) {
	if len(rc.replay) > 0 && rc.replay[0].Kind == kind {
		v := rc.replay[0]
		rc.replay = rc.replay[1:]
		return v, true
	}
	rc.replay = nil
	return RecordedValue{}, false
}

func (rc *recorder) Now() time.Time {
	if v, ok := rc.next(RecordedTime); ok {
		return v.Time
	}
	t := rc.r.now()
	rc.drawn = append(rc.drawn, RecordedValue{Step: rc.step, Kind: RecordedTime, Time: t})
	return t
}

func (rc *recorder) Rand() uint64 {
	if v, ok := rc.next(RecordedRand); ok {
		return v.Rand
	}
	n := rc.r.rand()
	rc.drawn = append(rc.drawn, RecordedValue{Step: rc.step, Kind: RecordedRand, Rand: n})
	return n
}

func (r *Runner) setProgress(f func(p *Progress)) {
	r.mu.Lock()
	f(&r.prog)
	r.mu.Unlock()
}

func callEffect(st Step, rc *recorder) (payload string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("step panicked: %v", p)
		}
	}()
	return st.Effect(rc)
}

// Run runs the steps of taskID from its last checkpoint.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run %q: %w", taskID, err)
	}
	if taskID == "" {
		return fmt.Errorf("run: %w", ErrNoTaskID)
	}
	r.setProgress(func(p *Progress) { p.Running = true })
	defer r.setProgress(func(p *Progress) { p.Running = false })

	cp, ok, err := r.store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("run %q: load: %w", taskID, err)
	}
	if ok && cp.Token > r.token {
		return fmt.Errorf("run %q: checkpoint has token %d, runner %d: %w", taskID, cp.Token, r.token, ErrStaleToken)
	}
	next := 0
	var values []RecordedValue
	if ok {
		next = cp.Next
		values = append([]RecordedValue(nil), cp.Values...)
	}
	total := len(steps)
	r.setProgress(func(p *Progress) {
		*p = Progress{TaskID: taskID, Total: total, Completed: next, ResumedFrom: next, Running: true}
	})

	commit := func(ctx context.Context, n int) error {
		return r.store.Commit(ctx, Checkpoint{TaskID: taskID, Token: r.token, Next: n, Total: total, Values: values})
	}

	for i := next; i < total; i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before step %d: %w", taskID, i, err)
		}
		rc := &recorder{r: r, step: i}
		for _, v := range values {
			if v.Step == i {
				rc.replay = append(rc.replay, v)
			}
		}
		payload, err := callEffect(steps[i], rc)
		if err != nil {
			return fmt.Errorf("run %q: step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if len(rc.drawn) > 0 {
			values = append(values, rc.drawn...)
			if err := commit(ctx, i); err != nil {
				return fmt.Errorf("run %q: step %d: commit values: %w", taskID, i, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before applying step %d: %w", taskID, i, err)
		}
		key := taskID + strconv.Itoa(i)
		if err := r.sink.Apply(ctx, key, payload); err != nil {
			return fmt.Errorf("run %q: step %d: apply %q: %w", taskID, i, key, err)
		}
		if err := commit(context.WithoutCancel(ctx), i+1); err != nil {
			return fmt.Errorf("run %q: step %d: commit: %w", taskID, i, err)
		}
		r.setProgress(func(p *Progress) { p.Completed = i + 1 })
	}
	return nil
}

// Progress returns how far the runner has taken its task.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prog
}
