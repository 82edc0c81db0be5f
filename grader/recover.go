package grader

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/rubric"
)

// DefaultCaseTimeout is the real time one case may run before the grader
// stops it (Options.CaseTimeout).
const DefaultCaseTimeout = 10 * time.Second

// minRunTime is the least time left of the run's limit worth starting
// another run of the test binary with.
const minRunTime = time.Second

// testTimeoutMargin is how much later than the run's deadline go test's own
// -test.timeout ends the binary.
const testTimeoutMargin = 10 * time.Second

// binaryRun runs the test binary once with the given -test.* arguments,
// within the given time, calls onStart with a function that stops it with a
// goroutine dump, and feeds its test2json stream to consume.
type binaryRun func(ctx context.Context, args []string, timeout time.Duration, onStart func(quit func()), consume func(io.Reader)) (runResult, error)

// recoverOptions configures runAndRecover.
type recoverOptions struct {
	caseTimeout time.Duration // the per-case budget of real time
	total       time.Duration // the whole run's limit, across every run of the binary
	// newKey, when set, is called before every run of the binary and
	// returns the key that run's verdicts are signed with.
	newKey func() ([]byte, error)
	// failFast stops the run at its first failing case (Options.FailFast).
	failFast bool
}

// runAndRecover runs the lab's suite to a verdict for every case, however
// the code under test misbehaves. It runs the test binary and watches its
// stream; a case that runs past its budget is stopped with SIGQUIT, so
// that the runtime prints every goroutine, and judged from that dump. When
// the binary ends before every case has a verdict (a case hung, or the
// binary crashed or exited in the middle of one), the cases that never
// started run again in a fresh process of the same binary, until every case
// has a verdict, a run makes no progress, or the run's time is used up.
func runAndRecover(ctx context.Context, p *parser, o recoverOptions, run binaryRun) error {
	if o.caseTimeout <= 0 {
		o.caseTimeout = DefaultCaseTimeout
	}
	deadline := time.Now().Add(o.total)
	for first := true; ; first = false {
		left := time.Until(deadline)
		if !first && left < minRunTime {
			p.stopForTime(o.total)
			return nil
		}
		var key []byte
		if o.newKey != nil {
			var err error
			if key, err = o.newKey(); err != nil {
				return err
			}
		}
		p.newAttempt(key)
		cases := []string(nil)
		if !first {
			cases = p.remaining()
		}
		// The watchdog stops a case at its budget or at the run's deadline,
		// whichever comes first; go test's own timeout, a little later,
		// only catches a binary that hangs outside any case.
		args := []string{"-test.v=test2json", "-test.paniconexit0", "-test.count=1",
			"-test.timeout=" + (left + testTimeoutMargin).Round(time.Millisecond).String(), "-test.run=" + runPattern(p.lab.TestName, cases)}
		if o.failFast {
			args = append(args, "-test.failfast")
		}

		w := newWatchdog(p, o.caseTimeout, deadline)
		res, err := run(ctx, args, left+testTimeoutMargin, w.started, p.consume)
		hung, atDeadline := w.stop()
		if err != nil {
			return err
		}
		end := runEnd{hung: hung, budget: o.caseTimeout, limit: res.limit, exited: res.exited}
		if atDeadline {
			end.runLimit = o.total
		}
		if w.inInit {
			end.initHung = o.caseTimeout
		}
		progress := p.endAttempt(end)
		if len(p.remaining()) == 0 || !progress {
			return nil
		}
		if o.failFast && p.stopAtFailure() {
			return nil
		}
		if p.progress != nil {
			fmt.Fprintf(p.progress, "  (running the %d remaining cases in a fresh test binary)\n", len(p.remaining()))
		}
	}
}

// runPattern is the -test.run pattern for the suite's top-level test and,
// when cases is not empty, exactly those cases.
func runPattern(test string, cases []string) string {
	pat := "^" + regexp.QuoteMeta(test) + "$"
	if len(cases) == 0 {
		return pat
	}
	quoted := make([]string, len(cases))
	for i, c := range cases {
		quoted[i] = regexp.QuoteMeta(c)
	}
	return pat + "/^(?:" + strings.Join(quoted, "|") + ")$"
}

// watchdog stops the test binary when a case runs past its budget or past
// the run's deadline.
type watchdog struct {
	p          *parser
	budget     time.Duration
	deadline   time.Time
	quit       chan func()
	done       chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	hung       string // the case it stopped the binary for
	atDeadline bool   // it stopped it for the run's deadline
	// inInit says it stopped a binary that started no case within the
	// budget (a loop or a wait in an init function); read after stop.
	inInit bool
}

func newWatchdog(p *parser, budget time.Duration, deadline time.Time) *watchdog {
	w := &watchdog{p: p, budget: budget, deadline: deadline, quit: make(chan func(), 1), done: make(chan struct{})}
	w.wg.Add(1)
	go w.watch()
	return w
}

// started is the binary's onStart: it hands the watchdog the function that
// stops the binary.
func (w *watchdog) started(quit func()) {
	select {
	case w.quit <- quit:
	default:
	}
}

func (w *watchdog) watch() {
	defer w.wg.Done()
	tick := time.NewTicker(min(max(w.budget/20, 10*time.Millisecond), 250*time.Millisecond))
	defer tick.Stop()
	var (
		quit      func()
		startedAt time.Time // when the binary started
	)
	for {
		select {
		case <-w.done:
			return
		case q := <-w.quit:
			quit, startedAt = q, time.Now()
		case <-tick.C:
			name, since := w.p.running()
			now := time.Now()
			if quit != nil && name == "" && since.IsZero() && (now.Sub(startedAt) >= w.budget || !now.Before(w.deadline)) {
				// No case has started: the binary is stuck before
				// the suite, in the code's init.
				w.mu.Lock()
				w.inInit = true
				w.mu.Unlock()
				quit()
				return
			}
			budget := rubric.Budget(name, w.budget)
			if quit == nil || name == "" || (now.Sub(since) < budget && now.Before(w.deadline)) {
				continue
			}
			w.mu.Lock()
			w.hung = name
			w.atDeadline = now.Sub(since) < budget
			w.mu.Unlock()
			quit()
			return
		}
	}
}

// stop ends the watch and returns the case it stopped the binary for (""
// when it did not), and whether it was for the run's deadline rather than
// the case's budget.
func (w *watchdog) stop() (string, bool) {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hung, w.atDeadline
}
