package claimsuite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/syncpoint"
)

// target is what every case is handed: a new, empty store and the lab's
// sentinel for a pending key.
type target struct {
	Store
	errInProgress error
}

// do calls Do(key) as actor and records the call and its result.
func (s target) do(h *suites.History, actor, key string, work func(context.Context) (string, error)) (string, error) {
	v, err := s.Do(context.Background(), key, work)
	h.Record(actor, fmt.Sprintf("Do(%q)", key), s.describe(v, err))
	return v, err
}

// describe renders a Do result for the timeline, naming the lab's sentinel.
func (s target) describe(value string, err error) string {
	switch {
	case err == nil:
		return fmt.Sprintf("returned %q, nil", value)
	case errors.Is(err, s.errInProgress):
		return fmt.Sprintf("returned %q, in progress (%v)", value, err)
	default:
		return fmt.Sprintf("returned %q, error %v", value, err)
	}
}

// errDeclined is the failure the work returns in checkFirstCall and
// checkFailureReleases.
var errDeclined = errors.New("card declined")

// counter wraps a work function so the suite knows how often it ran.
type counter struct {
	n      atomic.Int64 // executions, every key
	mu     sync.Mutex
	perKey map[string]int // executions per key, for the timeline
}

// work returns a work function that counts and narrates its executions,
// waits for gate (if not nil) and then returns value and err. Work never
// sleeps on the clock while other callers may be waiting: an implementation
// that holds a mutex during the work would freeze a fakeclock bubble (see
// suites.Call), so the suite gates work with channels it controls.
func (c *counter) work(h *suites.History, actor, key string, gate <-chan struct{}, value string, err error) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		c.n.Add(1)
		c.mu.Lock()
		if c.perKey == nil {
			c.perKey = map[string]int{}
		}
		c.perKey[key]++
		n := c.perKey[key]
		c.mu.Unlock()
		what := fmt.Sprintf("the work for %q starts", key)
		if h == nil {
			// Quiet: the caller narrates.
		} else if n == 1 {
			h.Record(actor, what, "its first execution")
		} else {
			h.Recordf(actor, what, "execution #%d of this key's work", n)
		}
		if gate != nil {
			<-gate
		}
		return value, err
	}
}

// notifyStart returns a channel closed by the work's first execution, and a
// work wrapper that closes it.
func notifyStart(work func(context.Context) (string, error)) (<-chan struct{}, func(context.Context) (string, error)) {
	ch := make(chan struct{})
	var once sync.Once
	return ch, func(ctx context.Context) (string, error) {
		once.Do(func() { close(ch) })
		return work(ctx)
	}
}

type result struct {
	value string
	err   error
}

// startSlow starts actor's Do(key) with work held at gate, and returns once
// the work has started (or Do has returned without starting it).
func (s target) startSlow(h *suites.History, c *counter, actor, key string, gate <-chan struct{}, value string) (*suites.Call, *result) {
	var r result
	startedCh, work := notifyStart(c.work(h, actor, key, gate, value, nil))
	call := suites.Go(func() {
		r.value, r.err = s.do(h, actor, key, work)
	})
	select {
	case <-startedCh:
	case <-call.Done():
	}
	return call, &r
}

// raceRound releases raceWorkers goroutines at once on one key and returns
// how many times the work ran, with one line per worker.
func (s target) raceRound(key string) (int64, []string) {
	var c counter
	var release atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lines []string
	for i := range raceWorkers {
		wg.Go(func() {
			for !release.Load() {
				runtime.Gosched()
			}
			v, err := s.Do(context.Background(), key, c.work(nil, "", key, nil, "ok", nil))
			mu.Lock()
			lines = append(lines, fmt.Sprintf("worker %d Do(%q) %s", i, key, s.describe(v, err)))
			mu.Unlock()
		})
	}
	release.Store(true)
	wg.Wait()
	return c.n.Load(), lines
}

// controlledRound runs raceWorkers callers of Do(key) under a schedule
// drawn from seed (suites/syncpoint): when the store's mutexes are the
// grader's instrumented ones, only one caller runs at a time and the suite
// picks who runs at every Lock, Unlock, Map and atomic operation. It returns how many times the
// work ran, one line per caller, and what the schedule did.
func (s target) controlledRound(seed int64, key string) (int64, []string, syncpoint.Result) {
	var c counter
	lines := make([]string, raceWorkers)
	names := make([]string, raceWorkers)
	fs := make([]func(), raceWorkers)
	for i := range raceWorkers {
		names[i] = fmt.Sprintf("worker %d", i)
		fs[i] = func() {
			v, err := s.Do(context.Background(), key, c.work(nil, "", key, nil, "ok", nil))
			lines[i] = fmt.Sprintf("worker %d Do(%q) %s", i, key, s.describe(v, err))
		}
	}
	res := syncpoint.Race(seed, names, fs...)
	return c.n.Load(), lines, res
}

// checkThenInsert is the calibration store of checkSimultaneousClaims: a
// claim split into a locked lookup and a separately locked insert, the bug
// the case is looking for.
type checkThenInsert struct {
	errInProgress error

	mu   sync.Mutex
	seen map[string]bool
}

func (b *checkThenInsert) Do(ctx context.Context, key string, work func(context.Context) (string, error)) (string, error) {
	b.mu.Lock()
	claimed := b.seen[key]
	b.mu.Unlock()
	if claimed {
		return "", b.errInProgress
	}
	b.mu.Lock()
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[key] = true
	b.mu.Unlock()
	return work(ctx)
}
