// Package suites is the toolkit every lab's conformance suite is built with:
// the runner that turns a list of cases into subtests, each in a bubble of
// its own on virtual time; the per-case History that becomes a failure's
// timeline; seeded randomness; and Go and Settle, which tell a call that is
// stuck from one that is merely slow.
//
// Each lab has one suite package (suites/claimsuite, ...) exporting
//
//	func Run(t *testing.T, <constructor>, <the lab's sentinels>...)
//
// in the manner of testing/slogtest.Run, plus a Lab value describing its
// cases. The same Run is called by the lab's test file, by the solution's
// test file, and by the grader for every submission and catalogued mistake.
// The rubric (points, concept, explanation) lives on the cases themselves,
// so the grader reads it from the same value the tests run.
//
// # The life of a case
//
// Run makes one subtest per case and, inside it:
//
//  1. opens a fakeclock bubble and starts the case's History at its t=0s;
//  2. builds what the case checks by calling the suite's newImpl inside the
//     bubble, so that goroutines the implementation starts (an actor that
//     owns a map, a background sweeper) belong to the bubble and can talk to
//     the goroutines of the case;
//  3. runs the case's Check; a panic in it, or in the implementation called
//     from it, fails the case with the panic's stack instead of ending the
//     test binary;
//  4. when the check returns, calls the Close method of anything newImpl
//     handed to CloseAtEnd, and lets the bubble end. Goroutines that the
//     implementation's constructors started (newImpl, and whatever a check
//     builds through Construct) and that are still blocked then (an actor
//     waiting for its next request, with no Close to stop it) are left
//     behind quietly: nothing can wake them any more. Any other goroutine
//     still blocked is a leak, and synctest reports it as a deadlock, as
//     fakeclock.Run always does.
//
// RunRealTime is the same without the bubble, for a suite that runs against
// something outside the process (lab 02 against a real Redis server).
package suites

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/attest"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/suites/internal/sign"
)

// Lab, Concept and Case are the rubric types of package rubric, named here
// so that a suite reads as one package.
type (
	Lab     = rubric.Lab
	Concept = rubric.Concept
	Case    = rubric.Case
)

// Test pairs a Case with the function that checks it against an
// implementation of type T. Check runs inside the case's bubble with the
// case's History, and records in it what happened.
//
// A model case (package suites/modelcheck) sets Model instead of Check: it
// builds its implementations itself, a new one for every sequence of calls
// it generates, each through fresh and so each in a bubble of its own (on
// virtual time), while Model itself runs outside any bubble, on the real
// clock that bounds its search.
type Test[T any] struct {
	Case
	Check func(t *testing.T, h *History, impl T)
	Model func(t *testing.T, h *History, fresh Fresh[T])
}

// Fresh runs f with a new implementation, built by the suite's newImpl as a
// case's is: in a new fakeclock bubble when the suite runs on virtual time
// (Run), with h restarted at the bubble's t=0s and the implementation's
// background goroutines left behind as a case's are; on the real clock
// under RunRealTime. Unlike a Check, f's panics are not turned into
// failures: a panic in f, once the bubble has ended, goes on in Fresh's
// caller, so that a model checker sees the failure of the sequence it ran
// (its own failures are panics) and can shrink it.
type Fresh[T any] func(t *testing.T, h *History, f func(t *testing.T, impl T))

// Cases returns the rubric part of tests, for a suite's Lab value.
func Cases[T any](tests []Test[T]) []Case {
	out := make([]Case, len(tests))
	for i, tt := range tests {
		out[i] = tt.Case
	}
	return out
}

// Run runs every test as a subtest of t named after its case, each in a
// fakeclock bubble of its own, as the package documentation describes.
// newImpl builds what one case checks; it is called once per case, inside
// the case's bubble and with the case's History, so cases never share
// state. When a case fails, its explanation, concept, seed and timeline are
// logged: that is what the grader shows the student.
func Run[T any](t *testing.T, lab Lab, tests []Test[T], newImpl func(t *testing.T, h *History) T) {
	t.Helper()
	run(t, lab, tests, newImpl, true)
}

// RunRealTime is Run on the real clock: no case runs in a bubble, so
// fakeclock.Advance is not available and time passes for real. It is for a
// suite that runs against something outside the process, which a bubble
// cannot hold.
func RunRealTime[T any](t *testing.T, lab Lab, tests []Test[T], newImpl func(t *testing.T, h *History) T) {
	t.Helper()
	run(t, lab, tests, newImpl, false)
}

func run[T any](t *testing.T, lab Lab, tests []Test[T], newImpl func(*testing.T, *History) T, bubble bool) {
	t.Helper()
	for _, tt := range tests {
		// No case runs in parallel, so t.Run returns its final verdict,
		// which the grader trusts only when signed (suites/internal/sign).
		var rec attest.Record
		passed := t.Run(tt.Name, func(t *testing.T) {
			h := NewHistory()
			openCase(t.Name())
			t.Cleanup(func() {
				rec = caseRecord(lab, t, h, closeCase(t.Name()), bubble)
				if t.Failed() && !sign.Enabled() {
					// No grader reads the record: the report is text.
					t.Log(failureReport(lab, tt.Case, h, t))
				}
			})
			if tt.Model != nil {
				fresh := func(t *testing.T, h *History, f func(*testing.T, T)) {
					if bubble {
						freshBubble(t, h, newImpl, f)
						return
					}
					f(t, newImpl(t, h))
				}
				Guard(t, func() { tt.Model(t, h, fresh) })
				return
			}
			if bubble {
				inBubble(t, h, newImpl, tt.Check)
				return
			}
			var impl T
			if Guard(t, func() { impl = newImpl(t, h) }) {
				Guard(t, func() { tt.Check(t, h, impl) })
			}
		})
		rec.Passed = passed
		sign.Case(t, tt.Name, rec)
	}
}

func failureReport(lab Lab, c Case, h *History, t *testing.T) string {
	var b strings.Builder
	fmt.Fprintf(&b, "why it matters: %s\n", c.Explanation)
	if concept := lab.Concept(c.Concept); concept.ID != "" {
		fmt.Fprintf(&b, "concept: %s (%s)\n", concept.Title, concept.Docs)
	}
	if seed, ok := seedOf(t); ok {
		fmt.Fprintf(&b, "seed: %d (replay with: %s)\n", seed, replayCommand(int64(lab.Number), seed))
	}
	b.WriteString(h.Timeline())
	return b.String()
}
