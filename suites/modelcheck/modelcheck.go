// Package modelcheck runs a lab's model cases: generated sequences of calls
// and faults, each step compared with an executable model of the lab's
// README (pgregory.net/rapid), and concurrent histories checked for
// linearizability against the same model (github.com/anishathalye/porcupine).
//
// A model case is a suites.Test whose Model field is set. Its model is
// written as checks of observed behaviour over the abstract state the test
// keeps (which keys are pending, which are done and with what result), never
// as an implementation of the lab's API: the suites ship to students, and
// nothing in them may pass a lab.
//
// # Sequences
//
// Sequences runs a rapid state machine: rapid draws the steps, each step
// calls the implementation and compares what it observed with the model,
// and a step that disagrees fails the sequence with a message in the
// suites' style. rapid then shortens the failing sequence, and the steps
// of the shortest one it found, as that run recorded them in a History of
// its own, become the case's timeline. Every sequence runs on a new
// implementation in a bubble of its own (suites.Fresh), so each starts at
// t=0s of virtual time, while rapid's search runs on the real clock. The
// search is seeded from the case's seed (suites.Seed), so LABKIT_SEED,
// which labctl check --seed sets, replays it; the number of sequences,
// their average length and the runs spent shortening are fixed by Config,
// not by the clock, so a seed gives the same verdict on every machine, and
// the same timeline on any machine fast enough to finish the shortening
// within its time limit (shrinkTime).
//
// # Concurrent histories
//
// A Recorder records operations that overlap for real (goroutines on the
// real scheduler), each with the logical times of its call and its return,
// and Linearizable checks them with porcupine against a model, partition by
// partition, with a time limit. The outcome can vary from run to run, so it
// may only ever fail a program that is wrong: a history that is not
// linearizable is a real bug, shown in the timeline; a check that ran out of
// time proves nothing and the case is reported "not exercised"
// (suites.Inconclusive), never failed.
package modelcheck

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/suites"
)

// Config bounds a model case's search. Zero fields take the defaults.
type Config struct {
	// Sequences is how many generated sequences are tried (100).
	Sequences int
	// Steps is the average number of steps in a sequence (30).
	Steps int
	// ShrinkRuns is how many runs, at most, are spent shortening a failing
	// sequence (2000). Counting runs rather than time keeps the shortest
	// sequence found, and so the timeline, the same on every machine.
	ShrinkRuns int
}

func (c Config) withDefaults() Config {
	if c.Sequences <= 0 {
		c.Sequences = 100
	}
	if c.Steps <= 0 {
		c.Steps = 30
	}
	if c.ShrinkRuns <= 0 {
		c.ShrinkRuns = 2000
	}
	return c
}

// shrinkTime bounds, in real time, how long rapid may spend shortening a
// failing sequence, so that a failing case stays well inside the grader's
// budget for one case (10 s). Config.ShrinkRuns is meant to end the
// shortening first; only on a machine too slow or too busy for that does
// the timeline shown depend on the machine (the verdict never does).
const shrinkTime = 6 * time.Second

// Seq is one generated sequence being run: the rapid.T its steps are drawn
// from (Draw, Repeat) and the History its steps are recorded in. A step
// that observes something the model does not allow calls Fatalf.
type Seq struct {
	*rapid.T
	// H is the sequence's history, on the sequence's own virtual clock.
	H *suites.History

	failure *string
}

// Fatalf ends the sequence as failing with a message in the suites' style
// (`Do("k1") = "x", <nil>, want "y", <nil>: why`), which becomes the case's
// failure message if this is the shortest failing sequence.
func (s *Seq) Fatalf(format string, args ...any) {
	s.Helper()
	msg := fmt.Sprintf(format, args...)
	*s.failure = msg
	s.T.Fatalf("%s", msg)
}

// Errorf is Fatalf: a sequence ends at the first step the model does not
// allow, since every later step would be measured against a state the
// implementation no longer shares with the model.
func (s *Seq) Errorf(format string, args ...any) {
	s.Helper()
	s.Fatalf(format, args...)
}

// Sequences runs the state machine run over cfg.Sequences generated
// sequences, each on a new implementation built by fresh, as the package
// documentation describes. run draws and performs the steps of one sequence
// (typically with s.Repeat) and records each in s.H. If a sequence fails,
// the case fails with the shortest failing sequence's message, and its
// steps are the case's timeline.
func Sequences[T any](t *testing.T, h *suites.History, fresh suites.Fresh[T], cfg Config, run func(s *Seq, impl T)) {
	t.Helper()
	cfg = cfg.withDefaults()
	seed := uint64(suites.Seed(t))
	if seed == 0 {
		seed = 1 << 53 // rapid takes 0 to mean "a random seed"
	}
	restore := setFlags(map[string]string{
		"rapid.checks":     fmt.Sprint(cfg.Sequences),
		"rapid.steps":      fmt.Sprint(cfg.Steps),
		"rapid.seed":       fmt.Sprint(seed),
		"rapid.nofailfile": "true",
		"rapid.shrinktime": shrinkTime.String(),
		"rapid.failfile":   "",
		"rapid.log":        "false",
		"rapid.v":          "false",
		"rapid.debug":      "false",
		"rapid.debugvis":   "false",
	})
	defer restore()

	var (
		tb       = &quietTB{name: t.Name()}
		runs     int // sequences run so far
		failedAt int // the run that first failed, 0 while none has
		// best is the last sequence that failed: while rapid shortens a
		// failure, every failing run is shorter than the one before.
		best struct {
			h       *suites.History
			failure string
		}
	)
	prop := func(rt *rapid.T) {
		runs++
		var ended any // what ended the run early: nil, or the value of a panic
		if failedAt > 0 && runs-failedAt > cfg.ShrinkRuns {
			// The budget for shortening is spent: from now on every run
			// fails at once with another failure than the sequence's.
			// rapid's shrinker rejects such a run as a candidate, and when
			// it reruns a shorter candidate that failed, to confirm it,
			// the disagreement ends the shortening. best keeps the
			// shortest real failure either way.
			ended = errStopShortening
		} else {
			sh := suites.NewHistory()
			var failure string
			ended = func() (r any) {
				defer func() { r = recover() }()
				fresh(t, sh, func(t *testing.T, impl T) {
					defer func() {
						// A panic of the implementation's (not one of
						// rapid's): keep its stack, which is lost once
						// the panic has left the bubble.
						if r := recover(); r != nil {
							if n := fmt.Sprintf("%T", r); !strings.HasPrefix(n, "rapid.") && !strings.HasPrefix(n, "*rapid.") && failure == "" {
								failure = fmt.Sprintf("panic: %v\n%s", r, suites.PanicStack())
							}
							panic(r)
						}
					}()
					run(&Seq{T: rt, H: sh, failure: &failure}, impl)
				})
				return nil
			}()
			switch fmt.Sprintf("%T", ended) {
			case "<nil>", "rapid.invalidData":
			case "rapid.stopTest", "*rapid.testError":
				if failure == "" {
					failure = fmt.Sprint(ended)
				}
			default:
				failure = fmt.Sprintf("panic: %v", ended)
			}
			if failure != "" {
				if failedAt == 0 {
					failedAt = runs
				}
				best.h, best.failure = sh, failure
				ended = errSequenceFailed
			}
		}
		// Every failure is raised again from this one line, with one
		// value: see raise.
		raise(ended)
	}

	func() {
		defer func() {
			if r := recover(); r != nil && r != errFailNow {
				panic(r)
			}
		}()
		rapid.Check(tb, prop)
	}()
	if t.Failed() {
		// The implementation failed the case outside the model (a Close
		// error, a harness check): that failure speaks for itself.
		return
	}
	if !tb.failed {
		return
	}
	if best.h == nil {
		// No sequence failed: rapid itself did (too many invalid ones).
		t.Errorf("%s", tb.message())
		return
	}
	steps := countSteps(best.h)
	unit := "steps"
	if steps == 1 {
		unit = "step"
	}
	h.Append(suites.Event{Actor: "test", Action: fmt.Sprintf(
		"model: a sequence of steps broke the README; the shortest failing sequence found (%d %s; the first failing one was number %d of the %d to try) replays below, from its own t=0s",
		steps, unit, failedAt, cfg.Sequences)})
	h.Append(best.h.Events()...)
	t.Errorf("%s", best.failure)
}

// raise ends a run the way rapid must see it. rapid's shrinker tells one
// failure from another by the panic's value and stack alone, and takes a
// failure whose message changed between two runs of the same sequence
// for a flaky one (a message may quote something that changes from run to
// run, such as a random claim token). So every failing run is raised from
// the same place, with the same value, errSequenceFailed; a run rapid
// must discard (an invalid draw) goes on with rapid's own value, and
// errStopShortening, raised from elsewhere, is a different failure.
func raise(ended any) {
	switch ended {
	case nil:
	case errSequenceFailed:
		panic(errSequenceFailed)
	case errStopShortening:
		stopShortening()
	default:
		panic(ended)
	}
}

// stopShortening ends rapid's shortening (see Sequences).
func stopShortening() { panic(errStopShortening) }

var (
	errSequenceFailed = errors.New("modelcheck: the sequence failed")
	errStopShortening = errors.New("modelcheck: the budget for shortening the failing sequence is spent")
)

// countSteps counts the events of a sequence's history that a step
// recorded (the test's own notes excluded).
func countSteps(h *suites.History) int {
	n := 0
	for _, e := range h.Events() {
		if e.Actor != "test" {
			n++
		}
	}
	return n
}

// setFlags sets rapid's command-line flags, which are its only settings,
// and returns a function that restores them. Cases never run in parallel,
// so no other case sees them.
func setFlags(values map[string]string) (restore func()) {
	old := map[string]string{}
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			panic("modelcheck: rapid has no flag -" + name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			panic(fmt.Sprintf("modelcheck: -%s=%s: %v", name, v, err))
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Set(name, v)
		}
	}
}

// errFailNow is how quietTB's FailNow ends rapid.Check.
var errFailNow = errors.New("modelcheck: rapid failed the check")

// quietTB is the testing.TB rapid reports to. It keeps rapid's output out
// of the case's: its advice to replay with -rapid.seed does not apply (the
// case's seed replays the search), and the case reports the shortest
// failing sequence itself.
type quietTB struct {
	name     string
	failed   bool
	messages []string
}

func (q *quietTB) Helper()                         {}
func (q *quietTB) Name() string                    { return q.name }
func (q *quietTB) Logf(format string, args ...any) {}
func (q *quietTB) Log(args ...any)                 {}
func (q *quietTB) Skipf(format string, args ...any) {
	q.Errorf(format, args...)
	q.FailNow()
}
func (q *quietTB) Skip(args ...any) { q.Skipf("%s", fmt.Sprint(args...)) }
func (q *quietTB) SkipNow()         { q.Skipf("skipped") }
func (q *quietTB) Errorf(format string, args ...any) {
	q.messages = append(q.messages, fmt.Sprintf(format, args...))
	q.failed = true
}
func (q *quietTB) Error(args ...any) { q.Errorf("%s", fmt.Sprint(args...)) }
func (q *quietTB) Fatalf(format string, args ...any) {
	q.Errorf(format, args...)
	q.FailNow()
}
func (q *quietTB) Fatal(args ...any) { q.Fatalf("%s", fmt.Sprint(args...)) }
func (q *quietTB) FailNow() {
	q.failed = true
	panic(errFailNow)
}
func (q *quietTB) Fail()        { q.failed = true }
func (q *quietTB) Failed() bool { return q.failed }

// replayAdvice is rapid's advice on replaying a failure, which the case's
// seed replaces.
var replayAdvice = regexp.MustCompile(`(?s)\nTo (try to )?reproduce.*`)

// message is what rapid reported, without its replay advice.
func (q *quietTB) message() string {
	var out []string
	for _, m := range q.messages {
		out = append(out, replayAdvice.ReplaceAllString(m, ""))
	}
	return strings.Join(out, "\n")
}
