package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Runner is an actor: one goroutine owns the progress, and Run and
// Progress talk to it over a channel. Run itself does the work in the
// caller's goroutine and reports each move to the actor.
type Runner struct {
	opts    Options
	updates chan func(*Progress)
	reads   chan chan Progress
	done    chan struct{}
}

func NewRunner(opts Options) (*Runner, error) {
	if opts.Store == nil || opts.Sink == nil || opts.Token == 0 {
		return nil, fmt.Errorf("actor runner: %w", ErrInvalidRunner)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Uint64
	}
	r := &Runner{opts: opts, updates: make(chan func(*Progress)), reads: make(chan chan Progress), done: make(chan struct{})}
	go r.loop()
	return r, nil
}

func (r *Runner) loop() {
	var p Progress
	for {
		select {
		case f := <-r.updates:
			f(&p)
		case reply := <-r.reads:
			reply <- p
		case <-r.done:
			return
		}
	}
}

// Close stops the actor.
func (r *Runner) Close() { close(r.done) }

func (r *Runner) update(f func(*Progress)) { r.updates <- f }

func (r *Runner) Progress() Progress {
	reply := make(chan Progress)
	r.reads <- reply
	return <-reply
}

type replayer struct {
	step       int
	old, fresh []RecordedValue
	opts       *Options
}

func (p *replayer) take() (RecordedValue, bool) {
	if len(p.old) == 0 {
		return RecordedValue{}, false
	}
	v := p.old[0]
	p.old = p.old[1:]
	return v, true
}

func (p *replayer) Now() time.Time {
	if v, ok := p.take(); ok {
		return v.Time
	}
	t := p.opts.Now()
	p.fresh = append(p.fresh, RecordedValue{Step: p.step, Kind: RecordedTime, Time: t})
	return t
}

func (p *replayer) Rand() uint64 {
	if v, ok := p.take(); ok {
		return v.Rand
	}
	n := p.opts.Rand()
	p.fresh = append(p.fresh, RecordedValue{Step: p.step, Kind: RecordedRand, Rand: n})
	return n
}

func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if taskID == "" {
		return ErrNoTaskID
	}
	if len(steps) == 0 {
		return nil
	}
	cp, ok, err := r.opts.Store.Load(ctx, taskID)
	if err != nil {
		return err
	}
	if ok && cp.Token > r.opts.Token {
		return ErrStaleToken
	}
	cp = Checkpoint{TaskID: taskID, Token: r.opts.Token, Next: cp.Next, Total: len(steps), Values: slices.Clone(cp.Values)}
	start := cp.Next
	r.update(func(p *Progress) {
		*p = Progress{TaskID: taskID, Total: len(steps), Completed: start, ResumedFrom: start, Running: true}
	})
	defer r.update(func(p *Progress) { p.Running = false })
	for i := start; i < len(steps); i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rp := &replayer{step: i, opts: &r.opts}
		for _, v := range cp.Values {
			if v.Step == i {
				rp.old = append(rp.old, v)
			}
		}
		payload, err := steps[i].Effect(rp)
		if err != nil {
			return err
		}
		if len(rp.fresh) > 0 {
			cp.Values = append(slices.Clone(cp.Values), rp.fresh...)
			if err := r.opts.Store.Commit(ctx, cp); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.opts.Sink.Apply(ctx, fmt.Sprintf("%s/%d", taskID, i), payload); err != nil {
			return err
		}
		cp.Next = i + 1
		cp.Values = slices.Clone(cp.Values)
		if err := r.opts.Store.Commit(context.WithoutCancel(ctx), cp); err != nil {
			return err
		}
		done := i + 1
		r.update(func(p *Progress) { p.Completed = done })
	}
	return nil
}
