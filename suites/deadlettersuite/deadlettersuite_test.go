package deadlettersuite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites/deadlettersuite"
	"github.com/fourth-outcome/labkit/task"
)

func TestLabIsValid(t *testing.T) {
	if err := deadlettersuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := deadlettersuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The suite must pass every correct queue, whatever its style. Besides the
// solution's two queues behind one mutex, swept by every call:

// TestActorQueue runs the suite on a queue in the Go actor style: New
// starts one goroutine that owns the main queue and the dead-letter queue,
// and every method sends it a request. It keeps a slice in delivery order
// instead of a map, counts receipts instead of drawing random ones, and
// moves an expired last delivery only when someone looks. It has a Close
// method, which stops the goroutine.
func TestActorQueue(t *testing.T) {
	deadlettersuite.Run(t, newActorQueue)
}

type actorQueue struct {
	requests chan func(*actorState)
	done     chan struct{}
}

type actorState struct {
	max        int
	visibility time.Duration
	validate   func(task.Task) error
	queue      []*actorEntry // enqueue order
	dead       []task.DeadLetter
	receipts   int
}

type actorEntry struct {
	task       task.Task
	receipt    task.Receipt
	visibleAt  time.Time
	deliveries int
	lastError  string
}

func newActorQueue(o task.DeadLetterOptions) (*actorQueue, error) {
	if o.MaxDeliveries < 0 || o.VisibilityTimeout < 0 || o.VisibilityTimeout > task.MaxDeliveryTimeout {
		return nil, fmt.Errorf("actor queue: %+v: %w", o, task.ErrInvalidOptions)
	}
	s := &actorState{max: o.MaxDeliveries, visibility: o.VisibilityTimeout, validate: o.Validate}
	if s.max == 0 {
		s.max = task.DefaultMaxDeliveries
	}
	if s.visibility == 0 {
		s.visibility = task.DefaultDeliveryTimeout
	}
	q := &actorQueue{requests: make(chan func(*actorState)), done: make(chan struct{})}
	go func() {
		for {
			select {
			case f := <-q.requests:
				f(s)
			case <-q.done:
				return
			}
		}
	}()
	return q, nil
}

// do runs f in the actor, which owns the state, and waits for it.
func (q *actorQueue) do(ctx context.Context, f func(*actorState) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("actor queue: %w", err)
	}
	reply := make(chan error)
	q.requests <- func(s *actorState) {
		s.settle(time.Now())
		reply <- f(s)
	}
	return <-reply
}

func (q *actorQueue) Close() { close(q.done) }

// settle ends expired deliveries, dead-lettering those that were the last.
func (s *actorState) settle(now time.Time) {
	var expired []*actorEntry
	for _, e := range s.queue {
		if e.receipt != "" && !now.Before(e.visibleAt) {
			expired = append(expired, e)
		}
	}
	slices.SortStableFunc(expired, func(a, b *actorEntry) int { return a.visibleAt.Compare(b.visibleAt) })
	for _, e := range expired {
		e.receipt = ""
		if e.deliveries >= s.max {
			s.park(e, task.ReasonMaxDeliveries)
		}
	}
}

func (s *actorState) park(e *actorEntry, reason task.DeadLetterReason) {
	s.queue = slices.DeleteFunc(s.queue, func(x *actorEntry) bool { return x == e })
	s.dead = append(s.dead, task.DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastError, Reason: reason})
}

func (s *actorState) has(id string) bool {
	return slices.ContainsFunc(s.queue, func(e *actorEntry) bool { return e.task.ID == id }) ||
		slices.ContainsFunc(s.dead, func(d task.DeadLetter) bool { return d.Task.ID == id })
}

func (s *actorState) byReceipt(r task.Receipt) (*actorEntry, error) {
	for _, e := range s.queue {
		if r != "" && e.receipt == r {
			return e, nil
		}
	}
	return nil, fmt.Errorf("actor queue: receipt %q: %w", r, task.ErrDeliveryLost)
}

func (s *actorState) valid(t task.Task) (err error) {
	if s.validate == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return s.validate(t)
}

func (q *actorQueue) Enqueue(ctx context.Context, t task.Task) error {
	return q.do(ctx, func(s *actorState) error {
		switch {
		case t.ID == "":
			return task.ErrNoTaskID
		case s.has(t.ID):
			return fmt.Errorf("actor queue: %s: %w", t.ID, task.ErrDuplicateMessage)
		}
		s.queue = append(s.queue, &actorEntry{task: t, visibleAt: time.Now()})
		return nil
	})
}

func (q *actorQueue) Receive(ctx context.Context, consumer string) (task.Message, error) {
	var m task.Message
	err := q.do(ctx, func(s *actorState) error {
		now := time.Now()
		for i := 0; i < len(s.queue); {
			e := s.queue[i]
			if e.receipt != "" || e.visibleAt.After(now) {
				i++
				continue
			}
			if err := s.valid(e.task); err != nil {
				e.lastError = err.Error()
				s.park(e, task.ReasonMalformed) // removes s.queue[i]
				continue
			}
			s.receipts++
			e.deliveries++
			e.receipt = task.Receipt(fmt.Sprintf("r%d", s.receipts))
			e.visibleAt = now.Add(s.visibility)
			m = task.Message{Task: e.task, Receipt: e.receipt, Consumer: consumer, Deliveries: e.deliveries, Expires: e.visibleAt}
			return nil
		}
		return task.ErrNoMessage
	})
	return m, err
}

func (q *actorQueue) Ack(ctx context.Context, r task.Receipt) error {
	return q.do(ctx, func(s *actorState) error {
		e, err := s.byReceipt(r)
		if err != nil {
			return err
		}
		s.queue = slices.DeleteFunc(s.queue, func(x *actorEntry) bool { return x == e })
		return nil
	})
}

func (q *actorQueue) Nack(ctx context.Context, r task.Receipt, cause error) error {
	return q.do(ctx, func(s *actorState) error {
		if cause == nil {
			return task.ErrNoCause
		}
		e, err := s.byReceipt(r)
		if err != nil {
			return err
		}
		e.lastError = cause.Error()
		e.receipt = ""
		if e.deliveries >= s.max {
			s.park(e, task.ReasonMaxDeliveries)
			return nil
		}
		e.visibleAt = time.Now()
		return nil
	})
}

func (q *actorQueue) List(ctx context.Context) ([]task.DeadLetter, error) {
	var out []task.DeadLetter
	err := q.do(ctx, func(s *actorState) error {
		out = slices.Clone(s.dead)
		return nil
	})
	return out, err
}

func (q *actorQueue) Redrive(ctx context.Context, id string) error {
	return q.do(ctx, func(s *actorState) error {
		i := slices.IndexFunc(s.dead, func(d task.DeadLetter) bool { return d.Task.ID == id })
		if i < 0 {
			return fmt.Errorf("actor queue: %s: %w", id, task.ErrNotDeadLettered)
		}
		t := s.dead[i].Task
		s.dead = slices.Delete(s.dead, i, i+1)
		s.queue = append(s.queue, &actorEntry{task: t, visibleAt: time.Now()})
		return nil
	})
}

// TestTimerQueue runs the suite on a queue that settles expiries eagerly:
// every delivery arms a timer (time.AfterFunc) that ends it at its Expires
// instant, instead of each call settling what has expired. It keeps the
// dead letters in a map with a sequence number for their order, and tells
// deliveries apart by a generation number inside the receipt.
func TestTimerQueue(t *testing.T) {
	deadlettersuite.Run(t, newTimerQueue)
}

type timerQueue struct {
	opts task.DeadLetterOptions

	mu      sync.Mutex
	tasks   map[string]*timerEntry
	dead    map[string]timerDead
	seq     int // enqueue and dead-letter order
	nextGen int
}

type timerEntry struct {
	task       task.Task
	seq        int
	gen        int // the delivery in progress, 0 when none
	timer      *time.Timer
	expires    time.Time
	deliveries int
	lastError  string
}

type timerDead struct {
	seq int
	task.DeadLetter
}

func newTimerQueue(o task.DeadLetterOptions) (*timerQueue, error) {
	switch {
	case o.MaxDeliveries < 0:
		return nil, fmt.Errorf("timer queue: max deliveries %d: %w", o.MaxDeliveries, task.ErrInvalidOptions)
	case o.VisibilityTimeout < 0, o.VisibilityTimeout > task.MaxDeliveryTimeout:
		return nil, fmt.Errorf("timer queue: timeout %v: %w", o.VisibilityTimeout, task.ErrInvalidOptions)
	}
	if o.MaxDeliveries == 0 {
		o.MaxDeliveries = task.DefaultMaxDeliveries
	}
	if o.VisibilityTimeout == 0 {
		o.VisibilityTimeout = task.DefaultDeliveryTimeout
	}
	return &timerQueue{opts: o, tasks: map[string]*timerEntry{}, dead: map[string]timerDead{}}, nil
}

// Close stops the timers of deliveries still in progress.
func (q *timerQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.tasks {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
}

func (q *timerQueue) receipt(id string, gen int) task.Receipt {
	return task.Receipt(fmt.Sprintf("%d/%s", gen, id))
}

// find returns the entry whose delivery in progress r names.
func (q *timerQueue) find(r task.Receipt) (*timerEntry, error) {
	var gen int
	var id string
	if n, _ := fmt.Sscanf(string(r), "%d/", &gen); n == 1 {
		_, id, _ = strings.Cut(string(r), "/")
	}
	e, ok := q.tasks[id]
	if !ok || gen == 0 || e.gen != gen || !time.Now().Before(e.expires) {
		return nil, fmt.Errorf("timer queue: %q: %w", r, task.ErrDeliveryLost)
	}
	return e, nil
}

// end ends e's delivery in progress; at the limit, e is dead-lettered.
// q.mu is held.
func (q *timerQueue) end(e *timerEntry) {
	e.gen = 0
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	if e.deliveries >= q.opts.MaxDeliveries {
		q.park(e, task.ReasonMaxDeliveries)
	}
}

func (q *timerQueue) park(e *timerEntry, reason task.DeadLetterReason) {
	delete(q.tasks, e.task.ID)
	q.seq++
	q.dead[e.task.ID] = timerDead{seq: q.seq, DeadLetter: task.DeadLetter{Task: e.task, Deliveries: e.deliveries, LastError: e.lastError, Reason: reason}}
}

func (q *timerQueue) Enqueue(ctx context.Context, t task.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.ID == "" {
		return task.ErrNoTaskID
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	_, queued := q.tasks[t.ID]
	_, parked := q.dead[t.ID]
	if queued || parked {
		return task.ErrDuplicateMessage
	}
	q.seq++
	q.tasks[t.ID] = &timerEntry{task: t, seq: q.seq}
	return nil
}

func (q *timerQueue) validate(t task.Task) (err error) {
	if q.opts.Validate == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validator panicked: %v", r)
		}
	}()
	return q.opts.Validate(t)
}

func (q *timerQueue) Receive(ctx context.Context, consumer string) (task.Message, error) {
	if err := ctx.Err(); err != nil {
		return task.Message{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		var pick *timerEntry
		for _, e := range q.tasks {
			if e.gen == 0 && (pick == nil || e.seq < pick.seq) {
				pick = e
			}
		}
		if pick == nil {
			return task.Message{}, task.ErrNoMessage
		}
		if err := q.validate(pick.task); err != nil {
			pick.lastError = err.Error()
			q.park(pick, task.ReasonMalformed)
			continue
		}
		q.nextGen++
		e, gen := pick, q.nextGen
		e.gen = gen
		e.deliveries++
		e.expires = time.Now().Add(q.opts.VisibilityTimeout)
		e.timer = time.AfterFunc(q.opts.VisibilityTimeout, func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			if e.gen == gen {
				q.end(e)
			}
		})
		return task.Message{Task: e.task, Receipt: q.receipt(e.task.ID, gen), Consumer: consumer, Deliveries: e.deliveries, Expires: e.expires}, nil
	}
}

func (q *timerQueue) Ack(ctx context.Context, r task.Receipt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, err := q.find(r)
	if err != nil {
		return err
	}
	e.timer.Stop()
	delete(q.tasks, e.task.ID)
	return nil
}

func (q *timerQueue) Nack(ctx context.Context, r task.Receipt, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cause == nil {
		return task.ErrNoCause
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	e, err := q.find(r)
	if err != nil {
		return err
	}
	e.lastError = cause.Error()
	q.end(e)
	return nil
}

func (q *timerQueue) List(ctx context.Context) ([]task.DeadLetter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	all := make([]timerDead, 0, len(q.dead))
	for _, d := range q.dead {
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b timerDead) int { return a.seq - b.seq })
	out := make([]task.DeadLetter, len(all))
	for i, d := range all {
		out[i] = d.DeadLetter
	}
	return out, nil
}

func (q *timerQueue) Redrive(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.dead[id]
	if !ok {
		return task.ErrNotDeadLettered
	}
	delete(q.dead, id)
	q.seq++
	q.tasks[id] = &timerEntry{task: d.Task, seq: q.seq}
	return nil
}
