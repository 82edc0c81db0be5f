package modelcheck_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/suites/modelcheck"
)

// set is the toy implementation the tests check: Add reports whether the
// key was new. The broken one keeps its keys as []rune, so that two
// different invalid UTF-8 keys are one key.
type set struct {
	mu     sync.Mutex
	keys   map[string]bool
	broken bool
	born   time.Time
}

func newSet(broken bool) *set { return &set{keys: map[string]bool{}, broken: broken, born: time.Now()} }

func (s *set) Add(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		k = string([]rune(k))
	}
	if s.keys[k] {
		return false
	}
	s.keys[k] = true
	return true
}

var keys = []string{"a", "b", "\xff", "\xfe", "", "a\x00"}

// checkSet is the model case: the model is the set of keys added so far.
func checkSet(t *testing.T, h *suites.History, fresh suites.Fresh[*set]) {
	modelcheck.Sequences(t, h, fresh, modelcheck.Config{Sequences: 50, Steps: 20}, func(s *modelcheck.Seq, impl *set) {
		if !impl.born.Equal(fakeclock.Epoch) {
			s.Fatalf("the sequence's implementation was built at %v, want %v: every sequence runs in a bubble of its own", impl.born, fakeclock.Epoch)
		}
		added := map[string]bool{}
		s.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				k := rapid.SampledFrom(keys).Draw(t, "key")
				got := impl.Add(k)
				s.H.Record("client", fmt.Sprintf("Add(%q)", k), fmt.Sprint(got))
				if want := !added[k]; got != want {
					s.Fatalf("Add(%q) = %v, want %v: keys are compared byte for byte", k, got, want)
				}
				added[k] = true
			},
			"wait": func(t *rapid.T) {
				fakeclock.Advance(time.Hour)
				s.H.Note("an hour passes")
			},
		})
	})
}

func lab() suites.Lab {
	return suites.Lab{Number: 9, Slug: "x", TestName: "TestHelper",
		Concepts: []suites.Concept{{ID: "c", Title: "T", Misconception: "M", Hint: "H", Docs: "docs/x.md#t"}},
		Cases:    []suites.Case{{Name: "model", Concept: "c", Points: 1, Explanation: "E"}}}
}

const helperEnv = "MODELCHECK_TEST_HELPER"

func TestHelper(t *testing.T) {
	which := os.Getenv(helperEnv)
	if which == "" {
		t.Skip("runs only as the helper of another test")
	}
	tests := []suites.Test[*set]{{Case: lab().Cases[0], Model: checkSet}}
	suites.Run(t, lab(), tests, func(*testing.T, *suites.History) *set { return newSet(which == "broken") })
}

func runHelper(t *testing.T, which string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelper$", "-test.v")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+which, "GORACE=atexit_sleep_ms=0"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCorrectImplementationPasses(t *testing.T) {
	out, err := runHelper(t, "correct")
	if err != nil || !strings.Contains(out, "--- PASS: TestHelper/model") {
		t.Fatalf("model case on a correct set: %v, want a pass\n%s", err, out)
	}
}

// timelineOf is the failure report's timeline, without the lines that
// name the test binary's own files.
func timelineOf(out string) string {
	i, j := strings.Index(out, suites.TimelineStart), strings.Index(out, suites.TimelineEnd)
	if i < 0 || j < i {
		return ""
	}
	return out[i:j]
}

func TestFailingSequenceIsShortenedAndReplayedFromTheSeed(t *testing.T) {
	out, err := runHelper(t, "broken")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("model case on a broken set: %v, want it to fail\n%s", err, out)
	}
	for _, want := range []string{
		"--- FAIL: TestHelper/model",
		"keys are compared byte for byte",
		"seed: ",
		"model: a sequence of steps broke the README",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rapid.seed") || strings.Contains(out, "[rapid]") {
		t.Errorf("output shows rapid's own report, want only the case's:\n%s", out)
	}
	tl := timelineOf(out)
	// The shortest failing sequence adds one invalid UTF-8 key and then
	// another: two steps.
	if n := strings.Count(tl, "client"); n != 2 {
		t.Errorf("the timeline has %d steps, want the 2 of the shortest failing sequence:\n%s", n, tl)
	}
	again, _ := runHelper(t, "broken")
	if got := timelineOf(again); got != tl {
		t.Errorf("a second run with the same seed shows another timeline:\n%s\nfirst:\n%s", got, tl)
	}
	seed := regexp.MustCompile(`seed: (\d+)`).FindStringSubmatch(out)
	if seed == nil {
		t.Fatalf("no seed in the report:\n%s", out)
	}
	replayed, _ := runHelper(t, "broken", suites.SeedEnv+"="+seed[1])
	if got := timelineOf(replayed); got != tl {
		t.Errorf("%s=%s shows another timeline:\n%s\nfirst:\n%s", suites.SeedEnv, seed[1], got, tl)
	}
}

// register is a porcupine model of one register: a write sets it, a read
// returns it.
var register = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in := input.([2]string)
		if in[0] == "write" {
			return true, in[1]
		}
		return output.(string) == state.(string), state
	},
}

func TestLinearizableFailsAStaleRead(t *testing.T) {
	out, err := runLinearizable(t, "stale")
	if err == nil || !strings.Contains(out, "not linearizable") || !strings.Contains(out, `client 2  Read() = ""`) {
		t.Errorf("a read that misses a write that returned before it: %v, want the case failed with the history\n%s", err, out)
	}
}

func TestLinearizableTimeoutIsNotExercised(t *testing.T) {
	out, err := runLinearizable(t, "timeout")
	if err != nil || !strings.Contains(out, rubric.InconclusiveMark) || !strings.Contains(out, "--- SKIP") {
		t.Errorf("a check with no time left: %v, want the case skipped as %q\n%s", err, rubric.InconclusiveMark, out)
	}
}

func runLinearizable(t *testing.T, which string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLinearizableHelper$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+which)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestLinearizableHelper(t *testing.T) {
	which := os.Getenv(helperEnv)
	if which == "" {
		t.Skip("runs only as the helper of another test")
	}
	ops := []modelcheck.Op{
		{Client: 0, Call: 1, Return: 2, Input: [2]string{"write", "x"}, Output: "", Action: `Write("x")`},
		{Client: 1, Call: 3, Return: 4, Input: [2]string{"read", ""}, Output: "", Action: "Read()", Outcome: `Read() = ""`},
	}
	h := suites.NewHistory()
	t.Cleanup(func() { t.Log(h.Timeline()) })
	budget := time.Second
	if which == "timeout" {
		budget = 0
	}
	modelcheck.Linearizable(t, h, register, nil, [][]modelcheck.Op{ops}, budget)
}

func TestLinearizablePassesAFreshRead(t *testing.T) {
	ops := []modelcheck.Op{
		{Client: 0, Call: 1, Return: 3, Input: [2]string{"write", "x"}, Output: ""},
		{Client: 1, Call: 2, Return: 4, Input: [2]string{"read", ""}, Output: ""}, // overlaps the write
		{Client: 1, Call: 5, Return: 6, Input: [2]string{"read", ""}, Output: "x"},
	}
	h := suites.NewHistory()
	modelcheck.Linearizable(t, h, register, nil, [][]modelcheck.Op{ops}, time.Second)
	if len(h.Events()) != 0 {
		t.Errorf("a linearizable history left a timeline:\n%s", h.Timeline())
	}
}
