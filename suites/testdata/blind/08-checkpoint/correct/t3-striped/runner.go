package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Runner runs multi-step tasks from their last checkpoint. Its progress is
// an immutable snapshot behind an atomic pointer: Progress never waits.
type Runner struct {
	store CheckpointStore
	sink  EffectSink
	token FencingToken
	now   func() time.Time
	rand  func() uint64
	prog  atomic.Pointer[Progress]
}

// NewRunner returns a runner.
func NewRunner(opts Options) (*Runner, error) {
	if opts.Store == nil || opts.Sink == nil || opts.Token == 0 {
		return nil, fmt.Errorf("new runner: store, sink and token are required: %w", ErrInvalidRunner)
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

// recorder replays the values a step drew before, then draws new ones.
type recorder struct {
	step   int
	replay []RecordedValue
	pos    int
	fresh  []RecordedValue
	now    func() time.Time
	rand   func() uint64
}

func (rc *recorder) next(kind task.RecordedKind) (RecordedValue, bool) {
	if rc.pos < len(rc.replay) && rc.replay[rc.pos].Kind == kind {
		v := rc.replay[rc.pos]
		rc.pos++
		return v, true
	}
	rc.pos = len(rc.replay) // past the replay: everything else is new
	return RecordedValue{}, false
}

func (rc *recorder) Now() time.Time {
	if v, ok := rc.next(RecordedTime); ok {
		return v.Time
	}
	t := rc.now()
	rc.fresh = append(rc.fresh, RecordedValue{Step: rc.step, Kind: RecordedTime, Time: t})
	return t
}

func (rc *recorder) Rand() uint64 {
	if v, ok := rc.next(RecordedRand); ok {
		return v.Rand
	}
	n := rc.rand()
	rc.fresh = append(rc.fresh, RecordedValue{Step: rc.step, Kind: RecordedRand, Rand: n})
	return n
}

func (r *Runner) setProgress(p Progress) { r.prog.Store(&p) }

// Run runs the steps of taskID from its last checkpoint.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run %q: %w", taskID, err)
	}
	if taskID == "" {
		return fmt.Errorf("run: %w", ErrNoTaskID)
	}
	p := Progress{TaskID: taskID, Total: len(steps), Running: true}
	r.setProgress(p)
	defer func() {
		p.Running = false
		r.setProgress(p)
	}()
	cp, ok, err := r.store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("run %q: load: %w", taskID, err)
	}
	if ok && cp.Token > r.token {
		return fmt.Errorf("run %q: checkpoint has token %d, runner %d: %w", taskID, cp.Token, r.token, ErrStaleToken)
	}
	if !ok {
		cp = Checkpoint{TaskID: taskID}
	}
	cp.Total = len(steps)
	p.Completed, p.ResumedFrom = cp.Next, cp.Next
	r.setProgress(p)
	for i := cp.Next; i < len(steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before step %d: %w", taskID, i, err)
		}
		rc := &recorder{step: i, now: r.now, rand: r.rand}
		for _, v := range cp.Values {
			if v.Step == i {
				rc.replay = append(rc.replay, v)
			}
		}
		payload, err := steps[i].Effect(rc)
		if err != nil {
			return fmt.Errorf("run %q: step %d (%s): %w", taskID, i, steps[i].Name, err)
		}
		if len(rc.fresh) > 0 {
			cp.Values = append(cp.Values, rc.fresh...)
			cp.Next, cp.Token = i, r.token
			if err := r.store.Commit(ctx, cp); err != nil {
				return fmt.Errorf("run %q: step %d: commit values: %w", taskID, i, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before applying step %d: %w", taskID, i, err)
		}
		key := taskID + "/" + strconv.Itoa(i)
		if err := r.sink.Apply(ctx, key, payload); err != nil {
			return fmt.Errorf("run %q: step %d: apply %q: %w", taskID, i, key, err)
		}
		cp.Next, cp.Token = i+1, r.token
		if err := r.store.Commit(context.WithoutCancel(ctx), cp); err != nil {
			return fmt.Errorf("run %q: step %d: commit: %w", taskID, i, err)
		}
		p.Completed = i + 1
		r.setProgress(p)
	}
	return nil
}

// Progress returns how far the runner has taken its task.
func (r *Runner) Progress() Progress {
	if p := r.prog.Load(); p != nil {
		return *p
	}
	return Progress{}
}
