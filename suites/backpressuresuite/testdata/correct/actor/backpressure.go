// Package backpressure, a correct alternative in the Go actor style: New
// starts one goroutine that owns all the state (a slice of waiting jobs,
// compacted as it drains, the tenants' counts, the jobs in flight), and
// every method sends it a function to run. A Submit that must wait for room
// gets a channel the actor closes when a place is freed, and waits on it,
// on its timer and on its context outside the actor. Close stops the actor.
package backpressure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

type (
	Task     = task.Task
	Options  = task.AdmissionOptions
	Claimer  = task.KeyClaimer
	Ticket   = task.Ticket
	Admitted = task.Admitted
	Stats    = task.AdmissionStats
	Forecast = task.BacklogForecast
)

const DefaultCapacity = task.DefaultQueueCapacity

var (
	ErrQueueFull     = task.ErrQueueFull
	ErrTenantFull    = task.ErrTenantFull
	ErrQueueEmpty    = task.ErrQueueEmpty
	ErrUnknownTicket = task.ErrUnknownTicket
	ErrInvalidRate   = task.ErrInvalidRate
)

type state struct {
	capacity, limit int
	waiting         []Admitted
	reserved        int
	tenants         map[string]int
	inFlight        map[Ticket]time.Time
	room            chan struct{}
	next            Ticket
	stats           Stats
}

type Queue struct {
	maxWait time.Duration
	claimer Claimer
	req     chan func(*state)
	stop    chan struct{}
}

func New(opts Options) *Queue {
	c := opts.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	l := opts.TenantLimit
	if l <= 0 {
		l = c / 4
		if l < 1 {
			l = 1
		}
	}
	if l > c {
		l = c
	}
	s := &state{capacity: c, limit: l, tenants: map[string]int{}, inFlight: map[Ticket]time.Time{}, room: make(chan struct{})}
	q := &Queue{maxWait: opts.MaxWait, claimer: opts.Claimer, req: make(chan func(*state)), stop: make(chan struct{})}
	go func() {
		for {
			select {
			case f := <-q.req:
				f(s)
			case <-q.stop:
				return
			}
		}
	}()
	return q
}

// Close stops the actor.
func (q *Queue) Close() { close(q.stop) }

func (q *Queue) do(f func(*state)) {
	done := make(chan struct{})
	q.req <- func(s *state) { f(s); close(done) }
	<-done
}

func (s *state) free(tenant string) {
	s.tenants[tenant]--
	if s.tenants[tenant] == 0 {
		delete(s.tenants, tenant)
	}
	close(s.room)
	s.room = make(chan struct{})
}

func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if ctx.Err() != nil {
		return fmt.Errorf("actor: %w", ctx.Err())
	}
	var deadline <-chan time.Time
	for {
		var refused error
		var room chan struct{}
		q.do(func(s *state) {
			switch {
			case len(s.waiting)+s.reserved >= s.capacity:
				refused = ErrQueueFull
			case s.tenants[tenant] >= s.limit:
				refused = ErrTenantFull
			default:
				s.reserved++
				s.tenants[tenant]++
				return
			}
			if q.maxWait <= 0 || (deadline != nil && len(deadline) > 0) {
				s.stats.Rejected++
			}
			room = s.room
		})
		if refused == nil {
			break
		}
		if q.maxWait <= 0 {
			return fmt.Errorf("actor: %w", refused)
		}
		if deadline == nil {
			if d, ok := ctx.Deadline(); ok && !d.After(time.Now().Add(q.maxWait)) {
				// The context's deadline comes first, or at the same
				// instant, and then it wins: no MaxWait timer at all.
				deadline = make(chan time.Time)
			} else {
				t := time.NewTimer(q.maxWait)
				defer t.Stop()
				deadline = t.C
			}
		}
		select {
		case <-room:
		case <-deadline:
			var still error
			q.do(func(s *state) {
				if len(s.waiting)+s.reserved >= s.capacity {
					still = ErrQueueFull
				} else if s.tenants[tenant] >= s.limit {
					still = ErrTenantFull
				}
				if still != nil {
					s.stats.Rejected++
				}
			})
			if still != nil {
				return fmt.Errorf("actor: %w", still)
			}
		case <-ctx.Done():
			return fmt.Errorf("actor: %w", ctx.Err())
		}
	}
	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.do(func(s *state) { s.reserved--; s.free(tenant) })
			return fmt.Errorf("actor: claim: %w", err)
		}
	}
	q.do(func(s *state) {
		s.reserved--
		s.waiting = append(s.waiting, Admitted{Tenant: tenant, Key: key, Job: job, Enqueued: time.Now()})
	})
	return nil
}

func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if ctx.Err() != nil {
		return Admitted{}, ctx.Err()
	}
	var a Admitted
	var err error
	q.do(func(s *state) {
		if len(s.waiting) == 0 {
			err = ErrQueueEmpty
			return
		}
		a = s.waiting[0]
		s.waiting[0] = Admitted{}
		s.waiting = s.waiting[1:]
		if len(s.waiting) == 0 {
			s.waiting = nil // let the backing array go
		}
		s.next++
		a.Ticket = s.next
		s.inFlight[a.Ticket] = a.Enqueued
		s.free(a.Tenant)
	})
	return a, err
}

func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var err error
	q.do(func(s *state) {
		enq, ok := s.inFlight[ticket]
		if !ok {
			err = ErrUnknownTicket
			return
		}
		delete(s.inFlight, ticket)
		d := time.Since(enq)
		s.stats.Completed++
		s.stats.LastLatency = d
		if d > s.stats.MaxLatency {
			s.stats.MaxLatency = d
		}
	})
	return err
}

func (q *Queue) Stats() Stats {
	var out Stats
	q.do(func(s *state) {
		out = s.stats
		out.Depth = len(s.waiting)
		out.InFlight = len(s.inFlight)
		if len(s.waiting) > 0 {
			out.OldestAge = time.Since(s.waiting[0].Enqueued)
		}
	})
	return out
}

var errBad = errors.New("bad forecast input")

func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	ok := func(r float64) bool { return r >= 0 && r <= math.MaxFloat64 }
	if backlog < 0 || !ok(arrival) || !ok(capacity) {
		return Forecast{}, fmt.Errorf("%w: %w", errBad, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	if backlog > 0 && capacity <= arrival {
		f.Never = true
	}
	if backlog == 0 || f.Never {
		return f, nil
	}
	ns := math.Ceil(float64(backlog) / (capacity - arrival) * 1e9)
	if ns > math.MaxInt64 || math.IsInf(ns, 1) {
		f.Recovery = time.Duration(math.MaxInt64)
	} else if ns == float64(math.MaxInt64) {
		f.Recovery = time.Duration(math.MaxInt64)
	} else {
		f.Recovery = time.Duration(ns)
	}
	return f, nil
}
