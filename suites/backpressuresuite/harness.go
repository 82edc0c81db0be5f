package backpressuresuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// target is what every case is handed: a way to build the student's queue
// with any options, the student's backlog arithmetic, and the case's test
// and history.
type target struct {
	t        *testing.T
	h        *suites.History
	build    func(task.AdmissionOptions) Queue
	forecast Forecast
}

// queue is one of the student's queues, with the suite's claim store and
// every call recorded in the case's history.
type queue struct {
	Queue
	t      *testing.T
	h      *suites.History
	opts   task.AdmissionOptions
	claims *claimer
}

// newQueue builds a queue with opts and a claim store of the suite's (a
// new one unless opts has one already).
func (e *target) newQueue(opts task.AdmissionOptions) *queue {
	e.t.Helper()
	c, ok := opts.Claimer.(*claimer)
	if !ok || c == nil {
		c = newClaimer(e.h)
		opts.Claimer = c
	}
	q := e.build(opts)
	e.h.Recordf("test", "New("+describeOptions(opts)+")", "a new queue")
	return &queue{Queue: q, t: e.t, h: e.h, opts: opts, claims: c}
}

func describeOptions(o task.AdmissionOptions) string {
	var parts []string
	if o.Capacity != 0 {
		parts = append(parts, fmt.Sprintf("Capacity: %d", o.Capacity))
	}
	if o.TenantLimit != 0 {
		parts = append(parts, fmt.Sprintf("TenantLimit: %d", o.TenantLimit))
	}
	if o.MaxWait != 0 {
		parts = append(parts, fmt.Sprintf("MaxWait: %v", o.MaxWait))
	}
	if len(parts) == 0 {
		return "Options{}"
	}
	return "Options{" + strings.Join(parts, ", ") + "}"
}

// job is the task the suite submits under key.
func job(key string) task.Task {
	return task.Task{ID: key, Account: "acct-1", DocumentID: "contract-" + key, Recipient: "ann@example.com", Subject: "Please sign"}
}

func (q *queue) submitCtx(ctx context.Context, tenant, key string) error {
	err := q.Submit(ctx, tenant, key, job(key))
	q.h.Record("producer "+tenant, fmt.Sprintf("Submit(%s)", key), outcome(err, "admitted"))
	return err
}

func (q *queue) submit(tenant, key string) error {
	return q.submitCtx(context.Background(), tenant, key)
}

// mustSubmit submits and fails the case if the job is refused.
func (q *queue) mustSubmit(tenant string, keys ...string) {
	q.t.Helper()
	for _, k := range keys {
		if err := q.submit(tenant, k); err != nil {
			q.t.Fatalf("Submit(%s, %s) = %v, want nil: the queue has room for it", tenant, k, err)
		}
	}
}

// fill submits n jobs of tenant, keyed prefix-0, prefix-1, ..., quietly
// (one line in the timeline), and fails the case if one is refused.
func (q *queue) fill(tenant, prefix string, n int) {
	q.t.Helper()
	for i := range n {
		if err := q.Submit(context.Background(), tenant, fmt.Sprintf("%s-%d", prefix, i), job(fmt.Sprintf("%s-%d", prefix, i))); err != nil {
			q.h.Recordf("producer "+tenant, fmt.Sprintf("Submit(%s-%d)", prefix, i), "error: %v", err)
			q.t.Fatalf("Submit(%s, %s-%d) = %v after %d admitted jobs, want nil: the queue has room for %d", tenant, prefix, i, err, i, n)
		}
	}
	q.h.Recordf("producer "+tenant, fmt.Sprintf("Submit(%s-0 ... %s-%d)", prefix, prefix, n-1), "%d jobs admitted", n)
}

// mustRefuse submits and fails the case unless the queue refuses the job
// at once with an error wrapping want, having claimed nothing.
func (q *queue) mustRefuse(tenant, key string, want error, why string) {
	q.t.Helper()
	before := q.claims.count(tenant, key)
	start := fakeclock.Elapsed()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	call := suites.Go(func() { err = q.submitCtx(ctx, tenant, key) })
	if !call.Settle() {
		q.h.Note("Submit(%s) is still waiting: the case frees it", key)
		q.unstick(call, cancel)
		q.t.Fatalf("Submit(%s, %s) %s waited, want it refused at once with an error wrapping %v: with MaxWait %v a full queue must not block", tenant, key, why, want, q.opts.MaxWait)
	}
	if waited := fakeclock.Elapsed() - start; waited != 0 {
		q.t.Errorf("Submit(%s, %s) %s returned after %v, want at once", tenant, key, why, waited)
	}
	if !errors.Is(err, want) {
		q.t.Fatalf("Submit(%s, %s) %s = %v, want an error wrapping %v", tenant, key, why, err, want)
	}
	if want == task.ErrQueueFull && errors.Is(err, task.ErrTenantFull) {
		q.t.Fatalf("Submit(%s, %s) %s = %v, want ErrQueueFull, not ErrTenantFull: no place of the queue is free, so the job is refused for the queue, whatever its tenant's share", tenant, key, why, err)
	}
	if n := q.claims.count(tenant, key); n != before {
		q.t.Fatalf("Submit(%s, %s) %s was refused but claimed its key: a refused job must leave its key free for the retry", tenant, key, why)
	}
}

// unstick frees a call that is stuck in the student's queue: it cancels
// the call's context, then takes jobs (making room) until the call
// returns, so that the case can end without a goroutine left blocked.
func (q *queue) unstick(call *suites.Call, cancel context.CancelFunc) {
	cancel()
	for range 10000 {
		if call.Settle() {
			return
		}
		if _, err := q.Take(context.Background()); err != nil {
			fakeclock.Advance(time.Hour)
		}
	}
}

func (q *queue) take(worker string) (task.Admitted, error) {
	a, err := q.Take(context.Background())
	if err == nil {
		q.h.Record(worker, "Take()", fmt.Sprintf("%s, enqueued at t=%s", a, at(a.Enqueued)))
	} else {
		q.h.Record(worker, "Take()", outcome(err, ""))
	}
	return a, err
}

// mustTake takes and fails the case unless the job of key comes out.
func (q *queue) mustTake(worker, key string) task.Admitted {
	q.t.Helper()
	a, err := q.take(worker)
	if err != nil || a.Key != key {
		q.t.Fatalf("Take() = %s, want the job %s", describeTake(a, err), key)
	}
	return a
}

// mustBeEmpty fails the case unless Take finds no job.
func (q *queue) mustBeEmpty(worker, why string) {
	q.t.Helper()
	a, err := q.take(worker)
	if !errors.Is(err, task.ErrQueueEmpty) {
		q.t.Fatalf("Take() %s = %s, want an error wrapping ErrQueueEmpty", why, describeTake(a, err))
	}
}

func describeTake(a task.Admitted, err error) string {
	if err != nil {
		return fmt.Sprintf("error %v", err)
	}
	return fmt.Sprintf("the job %s of %s", a.Key, a.Tenant)
}

func (q *queue) done(worker string, tk task.Ticket) error {
	err := q.Done(context.Background(), tk)
	q.h.Record(worker, fmt.Sprintf("Done(ticket %d)", tk), outcome(err, "done"))
	return err
}

func (q *queue) mustDone(worker string, tk task.Ticket) {
	q.t.Helper()
	if err := q.done(worker, tk); err != nil {
		q.t.Fatalf("Done(ticket %d) = %v, want nil", tk, err)
	}
}

func (q *queue) stats(why string) task.AdmissionStats {
	s := q.Stats()
	q.h.Record("dashboard", "Stats()", s.String())
	return s
}

// mustDepth fails the case unless Stats reports depth jobs waiting.
func (q *queue) mustDepth(depth int, why string) task.AdmissionStats {
	q.t.Helper()
	s := q.stats(why)
	if s.Depth != depth {
		q.t.Fatalf("Stats().Depth %s = %d, want %d", why, s.Depth, depth)
	}
	return s
}

// advance moves virtual time on by d and says so in the timeline.
func (q *queue) advance(d time.Duration, why string) {
	fakeclock.Advance(d)
	q.h.Note("%v later (t=%s): %s", d, fakeclock.Elapsed(), why)
}

func at(t time.Time) string {
	return t.Sub(fakeclock.Epoch).String()
}

func outcome(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

// claimer is the suite's claim store: it records every key claimed, can
// fail a claim, and can hold claims still until the case lets them answer.
type claimer struct {
	h *suites.History

	mu     sync.Mutex
	claims map[string]int // tenant/key -> claims that succeeded
	calls  map[string]int // tenant/key -> calls
	fail   func(tenant, key string) error
	held   func(key string) bool // which claims wait for the gate
	gate   chan struct{}         // closed by release
	start  chan string           // a held claim sends its key here as it starts waiting
}

func newClaimer(h *suites.History) *claimer {
	return &claimer{h: h, claims: map[string]int{}, calls: map[string]int{}}
}

func (c *claimer) Claim(ctx context.Context, tenant, key string) error {
	c.mu.Lock()
	c.calls[tenant+"/"+key]++
	var gate chan struct{}
	var start chan string
	if c.held != nil && c.held(key) {
		gate, start = c.gate, c.start
	}
	c.mu.Unlock()
	if gate != nil {
		c.h.Record("claim store", fmt.Sprintf("Claim(%s/%s)", tenant, key), "held still by the case")
		start <- key
		<-gate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		if err := c.fail(tenant, key); err != nil {
			c.h.Record("claim store", fmt.Sprintf("Claim(%s/%s)", tenant, key), "error: "+err.Error())
			return err
		}
	}
	c.claims[tenant+"/"+key]++
	c.h.Record("claim store", fmt.Sprintf("Claim(%s/%s)", tenant, key), "claimed")
	return nil
}

// count is how many claims of tenant/key succeeded.
func (c *claimer) count(tenant, key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims[tenant+"/"+key]
}

// callsOf is how many times tenant/key was claimed, successfully or not.
func (c *claimer) callsOf(tenant, key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[tenant+"/"+key]
}

// total is how many claims succeeded, and how many calls were made.
func (c *claimer) total() (claimed, calls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.claims {
		claimed += n
	}
	for _, n := range c.calls {
		calls += n
	}
	return claimed, calls
}

// hold makes the claims of the keys which says wait until release; each
// sends its key on the returned channel as it starts waiting.
func (c *claimer) hold(which func(key string) bool) <-chan string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = which
	c.gate = make(chan struct{})
	c.start = make(chan string, 1024)
	return c.start
}

// release lets every held claim answer, and the next ones answer at once.
func (c *claimer) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate != nil {
		close(c.gate)
	}
	c.held, c.gate = nil, nil
}

func (c *claimer) failWith(f func(tenant, key string) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = f
}

// only returns a predicate that holds exactly the keys given.
func only(keys ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(keys, k) }
}
