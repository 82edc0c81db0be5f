package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Runner runs multi-step tasks from their last checkpoint. Its progress is
// an immutable snapshot behind an atomic pointer: Run publishes a new one at
// each change, Progress reads whichever is current without any lock.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rand  func() uint64

	progress atomic.Pointer[Progress]
}

// NewRunner returns a runner that commits to opts.Store, applies effects
// to opts.Sink and fences its checkpoints with opts.Token.
func NewRunner(opts Options) (*Runner, error) {
	switch {
	case opts.Store == nil:
		return nil, fmt.Errorf("checkpoint: no store: %w", ErrInvalidRunner)
	case opts.Sink == nil:
		return nil, fmt.Errorf("checkpoint: no effect sink: %w", ErrInvalidRunner)
	case opts.Token == 0:
		return nil, fmt.Errorf("checkpoint: the zero fencing token: %w", ErrInvalidRunner)
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

func (r *Runner) publish(p Progress) { r.progress.Store(&p) }

// replayer is the Recorder of one run of one step: it hands back the
// values the step drew before, in order, then draws new ones.
type replayer struct {
	r     *Runner
	step  int
	old   []RecordedValue // this step's recorded values
	next  int             // how many of old were handed back
	drawn []RecordedValue // new values
}

func (p *replayer) take(kind task.RecordedKind) (RecordedValue, bool) {
	if p.next < len(p.old) && p.old[p.next].Kind == kind {
		v := p.old[p.next]
		p.next++
		return v, true
	}
	return RecordedValue{}, false
}

func (p *replayer) Now() time.Time {
	if v, ok := p.take(RecordedTime); ok {
		return v.Time
	}
	t := p.r.now()
	p.drawn = append(p.drawn, RecordedValue{Step: p.step, Kind: RecordedTime, Time: t})
	return t
}

func (p *replayer) Rand() uint64 {
	if v, ok := p.take(RecordedRand); ok {
		return v.Rand
	}
	n := p.r.rand()
	p.drawn = append(p.drawn, RecordedValue{Step: p.step, Kind: RecordedRand, Rand: n})
	return n
}

func stepKey(taskID string, i int) string { return taskID + "/" + strconv.Itoa(i) }

// Run runs the steps of taskID from its last checkpoint.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("checkpoint: run %q: %w", taskID, err)
	}
	if taskID == "" {
		return fmt.Errorf("checkpoint: run: %w", ErrNoTaskID)
	}
	prog := Progress{TaskID: taskID, Total: len(steps), Running: true}
	r.publish(prog)
	defer func() {
		prog.Running = false
		r.publish(prog)
	}()

	cp, ok, err := r.store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("checkpoint: run %q: %w", taskID, err)
	}
	if ok && cp.Token > r.token {
		return fmt.Errorf("checkpoint: run %q: the task holds token %d, this runner %d: %w", taskID, cp.Token, r.token, ErrStaleToken)
	}
	values := cp.Values
	prog.Completed, prog.ResumedFrom = cp.Next, cp.Next
	r.publish(prog)

	commit := func(ctx context.Context, next int) error {
		err := r.store.Commit(ctx, Checkpoint{TaskID: taskID, Token: r.token, Next: next, Total: len(steps), Values: values})
		if err != nil {
			return fmt.Errorf("checkpoint: run %q: commit at step %d: %w", taskID, next, err)
		}
		return nil
	}

	for i := cp.Next; i < len(steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("checkpoint: run %q before step %d: %w", taskID, i, err)
		}
		rec := &replayer{r: r, step: i}
		for _, v := range values {
			if v.Step == i {
				rec.old = append(rec.old, v)
			}
		}
		payload, err := steps[i].Effect(rec)
		if err != nil {
			return fmt.Errorf("checkpoint: run %q: step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if len(rec.drawn) > 0 {
			// kept with the step's checkpoint, once its effect is durable
			values = append(values[:len(values):len(values)], rec.drawn...)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("checkpoint: run %q before applying step %d: %w", taskID, i, err)
		}
		if err := r.sink.Apply(ctx, stepKey(taskID, i), payload); err != nil {
			return fmt.Errorf("checkpoint: run %q: applying step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if err := commit(context.WithoutCancel(ctx), i+1); err != nil {
			return err
		}
		prog.Completed = i + 1
		r.publish(prog)
	}
	return nil
}

var _ = errors.Is

// Progress returns how far the runner has taken its task.
func (r *Runner) Progress() Progress {
	if p := r.progress.Load(); p != nil {
		return *p
	}
	return Progress{}
}
