// Package backpressure is a bounded admission queue in front of a pool of
// workers, and the arithmetic that says whether its backlog drains.
package backpressure

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

type Task = task.Task
type Options = task.AdmissionOptions
type Claimer = task.KeyClaimer
type Ticket = task.Ticket
type Admitted = task.Admitted
type Stats = task.AdmissionStats
type Forecast = task.BacklogForecast

const DefaultCapacity = task.DefaultQueueCapacity

var (
	ErrQueueFull     = task.ErrQueueFull
	ErrTenantFull    = task.ErrTenantFull
	ErrQueueEmpty    = task.ErrQueueEmpty
	ErrUnknownTicket = task.ErrUnknownTicket
	ErrInvalidRate   = task.ErrInvalidRate
)

type entry struct {
	tenant, key string
	job         Task
	enqueued    time.Time
}

// Queue is a bounded admission queue, safe for concurrent use.
type Queue struct {
	capacity    int
	tenantLimit int
	maxWait     time.Duration
	claimer     Claimer

	mu       sync.Mutex
	buf      []entry // ring of capacity entries
	head, n  int
	reserved int            // places reserved by Submits still claiming
	tenants  map[string]int // places held per tenant (reserved + waiting)
	inflight map[Ticket]time.Time
	next     Ticket
	freed    chan struct{} // closed and replaced when a place is freed

	rejected, completed int64
	last, max           time.Duration
}

// New returns an empty queue with the documented defaults applied.
func New(opts Options) *Queue {
	c := opts.Capacity
	if c <= 0 {
		c = DefaultCapacity
	}
	tl := opts.TenantLimit
	if tl <= 0 {
		tl = c / 4
		if tl < 1 {
			tl = 1
		}
	}
	if tl > c {
		tl = c
	}
	mw := opts.MaxWait
	if mw < 0 {
		mw = 0
	}
	return &Queue{
		capacity:    c,
		tenantLimit: tl,
		maxWait:     mw,
		claimer:     opts.Claimer,
		buf:         make([]entry, c),
		tenants:     make(map[string]int),
		inflight:    make(map[Ticket]time.Time),
		freed:       make(chan struct{}),
	}
}

// roomLocked says why there is no room for tenant (nil when there is).
func (q *Queue) roomLocked(tenant string) error {
	if q.n+q.reserved >= q.capacity {
		return ErrQueueFull
	}
	if q.tenants[tenant] >= q.tenantLimit {
		return ErrTenantFull
	}
	return nil
}

func (q *Queue) freeLocked(tenant string) {
	if c := q.tenants[tenant] - 1; c > 0 {
		q.tenants[tenant] = c
	} else {
		delete(q.tenants, tenant)
	}
	close(q.freed)
	q.freed = make(chan struct{})
}

// admit reserves a place for tenant, waiting up to MaxWait.
func (q *Queue) admit(ctx context.Context, tenant string) error {
	start := time.Now()
	q.mu.Lock()
	why := q.roomLocked(tenant)
	if why == nil {
		q.reserved++
		q.tenants[tenant]++
		q.mu.Unlock()
		return nil
	}
	if q.maxWait <= 0 {
		q.rejected++
		q.mu.Unlock()
		return fmt.Errorf("backpressure: submit for tenant %q: %w", tenant, why)
	}
	end := start.Add(q.maxWait)
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	for {
		freed := q.freed
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("backpressure: submit for tenant %q: %w", tenant, ctx.Err())
		case <-timer.C:
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("backpressure: submit for tenant %q: %w", tenant, err)
			}
			q.mu.Lock()
			why := q.roomLocked(tenant)
			if why == nil {
				q.reserved++
				q.tenants[tenant]++
				q.mu.Unlock()
				return nil
			}
			q.rejected++
			q.mu.Unlock()
			return fmt.Errorf("backpressure: submit for tenant %q after %v: %w", tenant, q.maxWait, why)
		case <-freed:
		}
		q.mu.Lock()
		if q.roomLocked(tenant) == nil {
			q.reserved++
			q.tenants[tenant]++
			q.mu.Unlock()
			return nil
		}
	}
}

// Submit admits job for tenant under key: admission, then the claim, then
// the queue.
func (q *Queue) Submit(ctx context.Context, tenant, key string, job Task) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: submit: %w", err)
	}
	if err := q.admit(ctx, tenant); err != nil {
		return err
	}
	if q.claimer != nil {
		if err := q.claimer.Claim(ctx, tenant, key); err != nil {
			q.mu.Lock()
			q.reserved--
			q.freeLocked(tenant)
			q.mu.Unlock()
			return fmt.Errorf("backpressure: claim %s/%s: %w", tenant, key, err)
		}
	}
	q.mu.Lock()
	q.reserved--
	q.buf[(q.head+q.n)%q.capacity] = entry{tenant: tenant, key: key, job: job, enqueued: time.Now()}
	q.n++
	q.mu.Unlock()
	return nil
}

// Take hands out the oldest waiting job with a new ticket.
func (q *Queue) Take(ctx context.Context) (Admitted, error) {
	if err := ctx.Err(); err != nil {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return Admitted{}, fmt.Errorf("backpressure: take: %w", ErrQueueEmpty)
	}
	e := q.buf[q.head]
	q.buf[q.head] = entry{}
	q.head = (q.head + 1) % q.capacity
	q.n--
	q.next++
	t := q.next
	q.inflight[t] = e.enqueued
	q.freeLocked(e.tenant)
	return Admitted{Ticket: t, Tenant: e.tenant, Key: e.key, Job: e.job, Enqueued: e.enqueued}, nil
}

// Done records that the job of ticket is finished.
func (q *Queue) Done(ctx context.Context, ticket Ticket) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("backpressure: done: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	enq, ok := q.inflight[ticket]
	if !ok {
		return fmt.Errorf("backpressure: done ticket %d: %w", ticket, ErrUnknownTicket)
	}
	delete(q.inflight, ticket)
	lat := time.Since(enq)
	q.last = lat
	if lat > q.max {
		q.max = lat
	}
	q.completed++
	return nil
}

// Stats reports the queue now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{
		Depth:       q.n,
		InFlight:    len(q.inflight),
		Rejected:    q.rejected,
		Completed:   q.completed,
		LastLatency: q.last,
		MaxLatency:  q.max,
	}
	if q.n > 0 {
		s.OldestAge = time.Since(q.buf[q.head].enqueued)
	}
	return s
}

// ForecastBacklog says how fast a backlog grows and when it drains.
func ForecastBacklog(backlog int, arrival, capacity float64) (Forecast, error) {
	bad := func(r float64) bool { return math.IsNaN(r) || math.IsInf(r, 0) || r < 0 }
	if backlog < 0 || bad(arrival) || bad(capacity) {
		return Forecast{}, fmt.Errorf("backpressure: forecast(%d, %g, %g): %w", backlog, arrival, capacity, ErrInvalidRate)
	}
	f := Forecast{Growth: arrival - capacity}
	if backlog == 0 {
		return f, nil
	}
	if capacity <= arrival {
		f.Never = true
		return f, nil
	}
	secs := float64(backlog) / (capacity - arrival)
	const maxSecs = float64(math.MaxInt64 / int64(time.Second)) // 9223372036
	if math.IsInf(secs, 1) || secs > maxSecs+1 {
		f.Recovery = math.MaxInt64
		return f, nil
	}
	whole := math.Floor(secs)
	frac := math.Round((secs - whole) * 1e9)
	d := int64(whole) * int64(time.Second)
	if whole > maxSecs || d > math.MaxInt64-int64(frac) {
		f.Recovery = math.MaxInt64
		return f, nil
	}
	f.Recovery = time.Duration(d + int64(frac))
	return f, nil
}
