// Package lease is lab 05 written in another style than the reference
// solution, to show the suite accepts it: one actor goroutine owns the
// queue, and two heaps replace the reference's scan (the invisible tasks
// ordered by the instant they become visible, the visible ones by enqueue
// order). The worker is a fixed pool of Capacity goroutines, each leasing
// only when it is idle, with a watchdog timer at the lease's expiry instead
// of a renewal deadline.
package lease

import (
	"container/heap"
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/task"
)

type (
	Task          = task.Task
	LeaseToken    = task.LeaseToken
	Lease         = task.Lease
	LeaseQueue    = task.LeaseQueue
	Options       = task.QueueOptions
	WorkerOptions = task.WorkerOptions
	Handler       = task.Handler
)

const (
	DefaultVisibilityTimeout = task.DefaultVisibilityTimeout
	MaxVisibilityTimeout     = task.MaxVisibilityTimeout
)

var (
	ErrNoTask          = task.ErrNoTask
	ErrLeaseLost       = task.ErrLeaseLost
	ErrInvalidDuration = task.ErrInvalidDuration
	ErrInvalidTask     = task.ErrInvalidTask
	ErrDuplicateTask   = task.ErrDuplicateTask
)

type item struct {
	task      Task
	seq       int64
	visibleAt time.Time
	token     LeaseToken
	holder    string
	attempts  int
	index     int // in whichever heap holds the item
	waiting   bool
}

// waiting holds the items that are invisible, soonest visible first.
type waitHeap []*item

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].visibleAt.Before(h[j].visibleAt) }
func (h waitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitHeap) Push(x any)        { it := x.(*item); it.index = len(*h); *h = append(*h, it) }
func (h *waitHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// ready holds the visible items, enqueued first on top.
type readyHeap []*item

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *readyHeap) Push(x any)        { it := x.(*item); it.index = len(*h); *h = append(*h, it) }
func (h *readyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// state is owned by the actor goroutine; nothing else touches it.
type state struct {
	visibility time.Duration
	byID       map[string]*item
	byToken    map[LeaseToken]*item
	waiting    waitHeap
	ready      readyHeap
	seq        int64
}

// Queue sends every operation to its actor as a closure.
type Queue struct {
	ops  chan func(*state)
	stop chan struct{}
}

func New(opts Options) (*Queue, error) {
	vt := opts.VisibilityTimeout
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	if vt < 0 || vt > MaxVisibilityTimeout {
		return nil, fmt.Errorf("visibility timeout %v: %w", vt, ErrInvalidDuration)
	}
	q := &Queue{ops: make(chan func(*state)), stop: make(chan struct{})}
	st := &state{visibility: vt, byID: map[string]*item{}, byToken: map[LeaseToken]*item{}}
	go func() {
		for {
			select {
			case op := <-q.ops:
				op(st)
			case <-q.stop:
				return
			}
		}
	}()
	return q, nil
}

// Close stops the actor.
func (q *Queue) Close() { close(q.stop) }

// do runs op in the actor and waits for it.
func (q *Queue) do(op func(*state)) {
	done := make(chan struct{})
	q.ops <- func(st *state) { op(st); close(done) }
	<-done
}

// promote moves every item whose time has come from waiting to ready.
func (st *state) promote(now time.Time) {
	for len(st.waiting) > 0 && !st.waiting[0].visibleAt.After(now) {
		it := heap.Pop(&st.waiting).(*item)
		it.waiting = false
		heap.Push(&st.ready, it)
	}
}

// hide puts it in the waiting heap until at (it must be in neither heap).
func (st *state) hide(it *item, at time.Time) {
	it.visibleAt = at
	it.waiting = true
	heap.Push(&st.waiting, it)
}

// held returns the item whose current, unexpired lease token is.
func (st *state) held(token LeaseToken, now time.Time) (*item, bool) {
	it, ok := st.byToken[token]
	if !ok || !it.waiting || it.token != token || !now.Before(it.visibleAt) {
		return nil, false
	}
	return it, true
}

func (it *item) lease() Lease {
	return Lease{Task: it.task, Token: it.token, Holder: it.holder, Attempt: it.attempts, Expires: it.visibleAt}
}

func (q *Queue) Enqueue(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.ID == "" {
		return ErrInvalidTask
	}
	var err error
	q.do(func(st *state) {
		if st.byID[t.ID] != nil {
			err = fmt.Errorf("%s: %w", t.ID, ErrDuplicateTask)
			return
		}
		st.seq++
		it := &item{task: t, seq: st.seq}
		st.byID[t.ID] = it
		heap.Push(&st.ready, it)
	})
	return err
}

func (q *Queue) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	var l Lease
	err := ErrNoTask
	q.do(func(st *state) {
		now := time.Now()
		st.promote(now)
		if len(st.ready) == 0 {
			return
		}
		it := heap.Pop(&st.ready).(*item)
		delete(st.byToken, it.token)
		it.token = LeaseToken("r-" + rand.Text())
		it.holder = holder
		it.attempts++
		st.byToken[it.token] = it
		st.hide(it, now.Add(st.visibility))
		l, err = it.lease(), nil
	})
	return l, err
}

func (q *Queue) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	if d <= 0 || d > MaxVisibilityTimeout {
		return Lease{}, ErrInvalidDuration
	}
	var l Lease
	err := ErrLeaseLost
	q.do(func(st *state) {
		now := time.Now()
		it, ok := st.held(token, now)
		if !ok {
			return
		}
		it.visibleAt = now.Add(d)
		heap.Fix(&st.waiting, it.index)
		l, err = it.lease(), nil
	})
	return l, err
}

func (q *Queue) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := ErrLeaseLost
	q.do(func(st *state) {
		it, ok := st.held(token, time.Now())
		if !ok {
			return
		}
		heap.Remove(&st.waiting, it.index)
		delete(st.byToken, token)
		delete(st.byID, it.task.ID)
		err = nil
	})
	return err
}

func (q *Queue) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if delay < 0 || delay > MaxVisibilityTimeout {
		return ErrInvalidDuration
	}
	err := ErrLeaseLost
	q.do(func(st *state) {
		now := time.Now()
		it, ok := st.held(token, now)
		if !ok {
			return
		}
		heap.Remove(&st.waiting, it.index)
		delete(st.byToken, token)
		it.token = ""
		st.hide(it, now.Add(delay))
		err = nil
	})
	return err
}
