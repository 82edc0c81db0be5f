// Package suites holds what every lab's conformance suite shares: the
// rubric types (Lab, Concept, Case), the runner that turns a list of cases
// into subtests, the per-case History that becomes a failure's timeline, and
// seeded randomness.
//
// Each lab has one suite package (suites/claimsuite, ...) exporting
//
//	func Run(t *testing.T, <constructor>, ...)
//
// in the manner of testing/slogtest.Run, plus a Lab value describing its cases.
// The same Run is called by the lab's test file, by the solution's test file,
// and by the grader for every submission and catalogued mistake. The rubric
// (points, concept, explanation) lives on the cases themselves, so the grader
// reads it from the same value the tests run.
package suites

import (
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/rubric"
)

// Lab, Concept and Case are the rubric types of package rubric, named here
// so that a suite reads as one package.
type (
	Lab     = rubric.Lab
	Concept = rubric.Concept
	Case    = rubric.Case
)

// Test pairs a Case with the function that checks it against an
// implementation of type T.
type Test[T any] struct {
	Case
	Check func(t *testing.T, h *History, impl T)
}

// Cases returns the rubric part of tests, for a suite's Lab value.
func Cases[T any](tests []Test[T]) []Case {
	out := make([]Case, len(tests))
	for i, tt := range tests {
		out[i] = tt.Case
	}
	return out
}

// Run runs every test as a subtest of t named after its case. Before each
// check it starts a History; when a check fails, the case's explanation, its
// seed and the History's timeline are logged, which is what the grader shows
// the student. A panic in the check's own goroutine fails that case only (with
// the stack) instead of ending the whole run.
//
// newImpl is called once per case, inside the case's subtest (and so inside
// its bubble when the check starts one), so that cases never share state.
func Run[T any](t *testing.T, lab Lab, tests []Test[T], newImpl func(t *testing.T) T) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			h := newHistory()
			t.Cleanup(func() {
				if t.Failed() {
					t.Log(failureReport(lab, tt.Case, h, t))
				}
			})
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panic: %v\n%s", r, trimStack(debug.Stack()))
				}
			}()
			tt.Check(t, h, newImpl(t))
		})
	}
}

func failureReport(lab Lab, c Case, h *History, t *testing.T) string {
	var b strings.Builder
	fmt.Fprintf(&b, "why it matters: %s\n", c.Explanation)
	if concept := lab.Concept(c.Concept); concept.ID != "" {
		fmt.Fprintf(&b, "concept: %s (%s)\n", concept.Title, concept.Docs)
	}
	if seed, ok := seedOf(t); ok {
		fmt.Fprintf(&b, "seed: %d (replay with: labctl check %d --seed %d)\n", seed, lab.Number, seed)
	}
	b.WriteString(h.Timeline())
	return b.String()
}

func trimStack(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	// Drop the frames of debug.Stack, the deferred recover and the panic
	// machinery; keep the student's frames first.
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			lines = lines[i:]
			break
		}
	}
	if len(lines) > 30 {
		lines = append(lines[:30], "\t...")
	}
	return strings.Join(lines, "\n")
}

// SeedEnv is the environment variable that overrides every case's seed;
// labctl check --seed sets it.
const SeedEnv = "LABKIT_SEED"

var seeds = map[string]int64{}

// Seed returns the seed for the current case: the value of LABKIT_SEED when
// it is set, and otherwise a fixed number derived from the test's name, so
// the verdict is the same on every run and every machine. A failing case
// prints its seed so the run can be replayed.
func Seed(t *testing.T) int64 {
	t.Helper()
	if s := os.Getenv(SeedEnv); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: not an integer", SeedEnv, s)
		}
		seedsSet(t.Name(), n)
		return n
	}
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	n := int64(h.Sum64() & (1<<53 - 1))
	seedsSet(t.Name(), n)
	return n
}
