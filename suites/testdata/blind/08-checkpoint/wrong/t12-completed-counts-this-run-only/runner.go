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

// Runner runs multi-step tasks from their last checkpoint. Build it with
// NewRunner.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rand  func() uint64

	mu   sync.Mutex
	prog Progress
}

// NewRunner returns a runner that commits to opts.Store, applies effects
// to opts.Sink and fences its checkpoints with opts.Token.
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

// recorder hands back the values a step drew before, in order, and draws
// (and records) new ones once those run out.
type recorder struct {
	r      *Runner
	step   int
	replay []RecordedValue
	pos    int
	fresh  []RecordedValue
}

func (rc *recorder) next(kind task.RecordedKind) (RecordedValue, bool) {
	if rc.pos < len(rc.replay) && rc.replay[rc.pos].Kind == kind {
		v := rc.replay[rc.pos]
		rc.pos++
		return v, true
	}
	return RecordedValue{}, false
}

func (rc *recorder) Now() time.Time {
	if v, ok := rc.next(RecordedTime); ok {
		return v.Time
	}
	v := RecordedValue{Step: rc.step, Kind: RecordedTime, Time: rc.r.now()}
	rc.fresh = append(rc.fresh, v)
	return v.Time
}

func (rc *recorder) Rand() uint64 {
	if v, ok := rc.next(RecordedRand); ok {
		return v.Rand
	}
	v := RecordedValue{Step: rc.step, Kind: RecordedRand, Rand: rc.r.rand()}
	rc.fresh = append(rc.fresh, v)
	return v.Rand
}

func callEffect(st Step, rec Recorder) (payload string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("step panicked: %v", p)
		}
	}()
	if st.Effect == nil {
		return "", fmt.Errorf("step has no effect")
	}
	return st.Effect(rec)
}

func (r *Runner) setProgress(f func(p *Progress)) {
	r.mu.Lock()
	f(&r.prog)
	r.mu.Unlock()
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
		*p = Progress{TaskID: taskID, Total: total, Completed: 0, ResumedFrom: next, Running: true}
	})

	for i := next; i < total; i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before step %d: %w", taskID, i, err)
		}
		var replay []RecordedValue
		for _, v := range values {
			if v.Step == i {
				replay = append(replay, v)
			}
		}
		rec := &recorder{r: r, step: i, replay: replay}
		payload, err := callEffect(steps[i], rec)
		if err != nil {
			return fmt.Errorf("run %q: step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if len(rec.fresh) > 0 {
			values = append(values, rec.fresh...)
			vcp := Checkpoint{TaskID: taskID, Token: r.token, Next: i, Total: total, Values: values}
			if err := r.store.Commit(ctx, vcp); err != nil {
				return fmt.Errorf("run %q: commit values of step %d: %w", taskID, i, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before applying step %d: %w", taskID, i, err)
		}
		key := taskID + "/" + strconv.Itoa(i)
		if err := r.sink.Apply(ctx, key, payload); err != nil {
			return fmt.Errorf("run %q: apply %s: %w", taskID, key, err)
		}
		done := Checkpoint{TaskID: taskID, Token: r.token, Next: i + 1, Total: total, Values: values}
		if err := r.store.Commit(context.WithoutCancel(ctx), done); err != nil {
			return fmt.Errorf("run %q: commit step %d: %w", taskID, i, err)
		}
		r.setProgress(func(p *Progress) { p.Completed++ })
	}
	return nil
}

// Progress returns how far the runner has taken its task.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prog
}
