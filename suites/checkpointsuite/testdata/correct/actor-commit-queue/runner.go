package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Runner runs tasks from their last checkpoint. Its progress is published
// as an immutable snapshot behind an atomic pointer, so Progress never
// waits for anything.
type Runner struct {
	opts     Options
	progress atomic.Pointer[Progress]
}

// NewRunner checks the options and fills in the defaults.
func NewRunner(opts Options) (*Runner, error) {
	if opts.Store == nil || opts.Sink == nil || opts.Token == 0 {
		return nil, fmt.Errorf("new runner: need a store, a sink and a non-zero token: %w", ErrInvalidRunner)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Uint64
	}
	return &Runner{opts: opts}, nil
}

func (r *Runner) publish(p Progress) { r.progress.Store(&p) }

// Progress returns the last published snapshot.
func (r *Runner) Progress() Progress {
	if p := r.progress.Load(); p != nil {
		return *p
	}
	return Progress{}
}

// Run runs the remaining steps of taskID.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run %q: %w", taskID, err)
	}
	if taskID == "" {
		return fmt.Errorf("run: %w", ErrNoTaskID)
	}
	if len(steps) == 0 {
		return nil
	}
	cp, found, err := r.opts.Store.Load(ctx, taskID)
	if err != nil {
		return fmt.Errorf("run %q: %w", taskID, err)
	}
	if found && cp.Token > r.opts.Token {
		return fmt.Errorf("run %q: checkpoint token %d above ours %d: %w", taskID, cp.Token, r.opts.Token, ErrStaleToken)
	}
	p := Progress{TaskID: taskID, Total: len(steps), Completed: cp.Next, ResumedFrom: cp.Next, Running: true}
	r.publish(p)
	defer func() {
		p.Running = false
		r.publish(p)
	}()

	next := cp.Next
	values := append([]RecordedValue(nil), cp.Values...)
	write := func(c context.Context, n int) error {
		return r.opts.Store.Commit(c, Checkpoint{
			TaskID: taskID, Token: r.opts.Token, Next: n, Total: len(steps),
			Values: append([]RecordedValue(nil), values...),
		})
	}
	for i := next; i < len(steps); i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: before step %d: %w", taskID, i, err)
		}
		var mine []RecordedValue
		for _, v := range values {
			if v.Step == i {
				mine = append(mine, v)
			}
		}
		rec := &cursorRecorder{step: i, recorded: mine, now: r.opts.Now, rand: r.opts.Rand}
		payload, err := steps[i].Effect(rec)
		if err != nil {
			return fmt.Errorf("run %q: step %d: %w", taskID, i, err)
		}
		if fresh := rec.drawn[len(mine):]; len(fresh) > 0 {
			values = append(values, fresh...)
			if err := write(ctx, i); err != nil {
				return fmt.Errorf("run %q: step %d values: %w", taskID, i, err)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("run %q: step %d: %w", taskID, i, err)
		}
		if err := r.opts.Sink.Apply(ctx, fmt.Sprintf("%s/%d", taskID, i), payload); err != nil {
			return fmt.Errorf("run %q: step %d apply: %w", taskID, i, err)
		}
		if err := write(context.WithoutCancel(ctx), i+1); err != nil {
			return fmt.Errorf("run %q: step %d checkpoint: %w", taskID, i, err)
		}
		p.Completed = i + 1
		r.publish(p)
	}
	return nil
}

// cursorRecorder hands back the recorded values by position, then draws.
type cursorRecorder struct {
	step     int
	recorded []RecordedValue
	drawn    []RecordedValue // every value handed out, recorded ones first
	now      func() time.Time
	rand     func() uint64
}

func (c *cursorRecorder) Now() time.Time {
	if n := len(c.drawn); n < len(c.recorded) {
		c.drawn = append(c.drawn, c.recorded[n])
		return c.recorded[n].Time
	}
	t := c.now()
	c.drawn = append(c.drawn, RecordedValue{Step: c.step, Kind: RecordedTime, Time: t})
	return t
}

func (c *cursorRecorder) Rand() uint64 {
	if n := len(c.drawn); n < len(c.recorded) {
		c.drawn = append(c.drawn, c.recorded[n])
		return c.recorded[n].Rand
	}
	x := c.rand()
	c.drawn = append(c.drawn, RecordedValue{Step: c.step, Kind: RecordedRand, Rand: x})
	return x
}
