package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

// Memory is an in-memory backend owned by one goroutine: every method
// sends it a closure and waits, so the closures run one at a time.
type Memory struct {
	cfg  config
	reqs chan func(*memState)
}

type memState struct {
	jobs   []*task.JobInfo // submission order
	byID   map[string]int
	tokens Token
	open   int
}

// NewMemory starts the backend's goroutine.
func NewMemory(o Options) (*Memory, error) {
	cfg, err := resolve(o)
	if err != nil {
		return nil, err
	}
	m := &Memory{cfg: cfg, reqs: make(chan func(*memState))}
	go func() {
		st := &memState{byID: map[string]int{}}
		for f := range m.reqs {
			f(st)
		}
	}()
	return m, nil
}

// do runs f in the owner goroutine, unless ctx is done first.
func (m *Memory) do(ctx context.Context, f func(*memState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	m.reqs <- func(s *memState) { f(s); close(done) }
	<-done
	return nil
}

func (m *Memory) Submit(ctx context.Context, j Job) (ok bool, err error) {
	if err := validJob(j); err != nil && ctx.Err() == nil {
		return false, err
	}
	j = Job{ID: j.ID, Account: j.Account, Steps: slices.Clone(j.Steps)}
	if derr := m.do(ctx, func(s *memState) {
		if i, found := s.byID[j.ID]; found {
			old := s.jobs[i].Job
			if old.Account != j.Account || !slices.Equal(old.Steps, j.Steps) {
				err = fmt.Errorf("submit %q: %w", j.ID, ErrConflict)
			}
			return
		}
		if s.open >= m.cfg.capacity {
			err = fmt.Errorf("submit %q: %w", j.ID, ErrFull)
			return
		}
		s.byID[j.ID] = len(s.jobs)
		s.jobs = append(s.jobs, &task.JobInfo{Job: j, State: task.JobQueued, Until: m.cfg.clock()})
		s.open++
		ok = true
	}); derr != nil {
		return false, derr
	}
	return ok, err
}

func (m *Memory) Lease(ctx context.Context, worker string) (l Lease, err error) {
	if derr := m.do(ctx, func(s *memState) {
		now := m.cfg.clock()
		for {
			var next *task.JobInfo
			for _, in := range s.jobs {
				if (in.State == task.JobQueued || in.State == task.JobLeased) && !in.Until.After(now) &&
					(next == nil || in.Until.Before(next.Until)) {
					next = in
				}
			}
			if next == nil {
				err = ErrNoJob
				return
			}
			if next.Deliveries >= m.cfg.maxDeliveries {
				next.State, next.Reason, next.Until = task.JobDead, task.ReasonMaxDeliveries, time.Time{}
				s.open--
				continue
			}
			s.tokens++
			next.State, next.Token, next.Until = task.JobLeased, s.tokens, now.Add(m.cfg.visibility)
			next.Deliveries++
			l = Lease{Job: Job{ID: next.Job.ID, Account: next.Job.Account, Steps: slices.Clone(next.Job.Steps)},
				Token: next.Token, Worker: worker, Delivery: next.Deliveries, Step: next.Step, Expires: next.Until}
			return
		}
	}); derr != nil {
		return Lease{}, derr
	}
	return l, err
}

var errLost = errors.New("not the current lease")

// held returns l's job if l is its current lease now.
func (m *Memory) held(s *memState, l Lease, now time.Time) (*task.JobInfo, error) {
	i, ok := s.byID[l.Job.ID]
	if !ok {
		return nil, fmt.Errorf("job %q: %w (%w)", l.Job.ID, ErrLeaseLost, errLost)
	}
	in := s.jobs[i]
	if in.State != task.JobLeased || in.Token != l.Token || !now.Before(in.Until) {
		return nil, fmt.Errorf("job %q token %d: %w", l.Job.ID, l.Token, ErrLeaseLost)
	}
	return in, nil
}

func (m *Memory) Checkpoint(ctx context.Context, l Lease, step int) (out Lease, err error) {
	if derr := m.do(ctx, func(s *memState) {
		now := m.cfg.clock()
		in, herr := m.held(s, l, now)
		if herr != nil {
			err = herr
			return
		}
		in.Step, in.Until = step, now.Add(m.cfg.visibility)
		out = l
		out.Step, out.Expires = step, in.Until
	}); derr != nil {
		return Lease{}, derr
	}
	return out, err
}

func (m *Memory) Complete(ctx context.Context, l Lease) (err error) {
	if derr := m.do(ctx, func(s *memState) {
		in, herr := m.held(s, l, m.cfg.clock())
		if herr != nil {
			err = herr
			return
		}
		in.State, in.Until = task.JobDone, time.Time{}
		s.open--
	}); derr != nil {
		return derr
	}
	return err
}

func (m *Memory) Fail(ctx context.Context, l Lease, cause error) (err error) {
	if derr := m.do(ctx, func(s *memState) {
		now := m.cfg.clock()
		in, herr := m.held(s, l, now)
		if herr != nil {
			err = herr
			return
		}
		in.LastError = cause.Error()
		switch {
		case errors.Is(cause, ErrPermanent), in.Deliveries >= m.cfg.maxDeliveries:
			in.Reason = task.ReasonMaxDeliveries
			if errors.Is(cause, ErrPermanent) {
				in.Reason = task.ReasonPermanent
			}
			in.State, in.Until = task.JobDead, time.Time{}
			s.open--
		default:
			in.State, in.Until = task.JobQueued, now.Add(cappedBackoff(m.cfg, in.Deliveries))
		}
	}); derr != nil {
		return derr
	}
	return err
}

// cappedBackoff is min(max, base*2^(n-1)), doubling until the cap.
func cappedBackoff(c config, n int) time.Duration {
	if n > 62 {
		return c.maxBackoff
	}
	limit := c.baseBackoff
	for i := 1; i < n; i++ {
		if limit >= c.maxBackoff {
			return c.maxBackoff
		}
		limit *= 2
	}
	return min(limit, c.maxBackoff)
}

func (m *Memory) Inspect(ctx context.Context, id string) (out Info, err error) {
	if derr := m.do(ctx, func(s *memState) {
		i, ok := s.byID[id]
		if !ok {
			err = fmt.Errorf("inspect %q: %w", id, ErrUnknownJob)
			return
		}
		out = *s.jobs[i]
		out.Job.Steps = slices.Clone(out.Job.Steps)
	}); derr != nil {
		return Info{}, derr
	}
	return out, err
}
