package suites

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

// actor is an implementation in the Go actor style: New starts one
// goroutine that owns the state, and every call sends it a request with a
// reply channel.
type actor struct {
	requests chan chan time.Duration
	closed   bool
}

func newActor() *actor {
	a := &actor{requests: make(chan chan time.Duration)}
	go func() {
		for reply := range a.requests {
			reply <- fakeclock.Elapsed()
		}
	}()
	return a
}

// now asks the actor for the time it sees.
func (a *actor) now() time.Duration {
	reply := make(chan time.Duration)
	a.requests <- reply
	return <-reply
}

// closingActor is an actor with a Close method that stops its goroutine.
type closingActor struct{ *actor }

func (a closingActor) Close() error {
	close(a.requests)
	a.closed = true
	return nil
}

func testLab(names ...string) Lab {
	l := Lab{Number: 9, Slug: "x", TestName: "TestX",
		Concepts: []Concept{{ID: "c", Title: "T", Misconception: "M", Hint: "H", Docs: "docs/x.md#t"}}}
	for _, n := range names {
		l.Cases = append(l.Cases, Case{Name: n, Concept: "c", Points: 1, Explanation: "E"})
	}
	return l
}

func TestRunBuildsTheImplementationInsideTheBubble(t *testing.T) {
	var built []*actor
	tests := []Test[*actor]{
		{Case: Case{Name: "first"}, Check: func(t *testing.T, h *History, a *actor) {
			fakeclock.Advance(time.Minute)
			if got := a.now(); got != time.Minute {
				t.Errorf("the actor sees t=%v after Advance(1m), want 1m: it must run on the case's clock", got)
			}
		}},
		{Case: Case{Name: "second"}, Check: func(t *testing.T, h *History, a *actor) {
			if got := a.now(); got != 0 {
				t.Errorf("the second case's actor sees t=%v, want 0: every case has a bubble and an implementation of its own", got)
			}
		}},
	}
	// The actors have no Close: their goroutines are still waiting for a
	// request when each case ends, and are left behind.
	Run(t, testLab("first", "second"), tests, func(t *testing.T, h *History) *actor {
		a := newActor()
		built = append(built, a)
		return a
	})
	if len(built) != 2 || built[0] == built[1] {
		t.Errorf("newImpl built %d implementations for 2 cases, want one per case", len(built))
	}
}

func TestRunClosesWhatNewImplHandsToCloseAtEnd(t *testing.T) {
	var a closingActor
	tests := []Test[closingActor]{{Case: Case{Name: "only"}, Check: func(t *testing.T, h *History, a closingActor) {
		if a.closed {
			t.Error("Close was called before the check ran")
		}
		a.now()
	}}}
	Run(t, testLab("only"), tests, func(t *testing.T, h *History) closingActor {
		a = closingActor{newActor()}
		CloseAtEnd(t, a)
		return a
	})
	if !a.closed {
		t.Error("Close was not called at the end of the case")
	}
}

func TestConstructDuringACase(t *testing.T) {
	// A check that builds more instances during the case (a worker process
	// restarted after a crash) builds them through Construct, and their
	// goroutines may be left behind too.
	tests := []Test[int]{{Case: Case{Name: "only"}, Check: func(t *testing.T, h *History, _ int) {
		for range 3 {
			a := Construct(newActor)
			fakeclock.Advance(time.Second)
			a.now()
		}
	}}}
	Run(t, testLab("only"), tests, func(*testing.T, *History) int { return 0 })
}

func TestRunRealTime(t *testing.T) {
	tests := []Test[int]{{Case: Case{Name: "only"}, Check: func(t *testing.T, h *History, n int) {
		if n != 42 {
			t.Errorf("impl = %d, want 42", n)
		}
		if time.Now().Before(fakeclock.Epoch.AddDate(20, 0, 0)) {
			t.Error("RunRealTime ran the case on a fake clock")
		}
	}}}
	RunRealTime(t, testLab("only"), tests, func(*testing.T, *History) int { return 42 })
}

// helperEnv makes the test binary run one of the failing suites below, for
// the tests that look at how such a suite fails.
const helperEnv = "SUITES_TEST_HELPER"

func TestHelperSuite(t *testing.T) {
	leak := func(t *testing.T, h *History, _ int) {
		block := make(chan struct{})
		go func() { <-block }() // started by the check, never ends
	}
	panics := func(t *testing.T, h *History, _ int) {
		h.Note("about to panic")
		var m map[string]int
		m["x"] = 1
	}
	passes := func(t *testing.T, h *History, _ int) {}
	switch os.Getenv(helperEnv) {
	case "panic":
		Run(t, testLab("panics", "passes"), []Test[int]{{Case: Case{Name: "panics"}, Check: panics}, {Case: Case{Name: "passes"}, Check: passes}},
			func(*testing.T, *History) int { return 0 })
	case "leak":
		Run(t, testLab("leaks"), []Test[int]{{Case: Case{Name: "leaks"}, Check: leak}}, func(*testing.T, *History) int { return 0 })
	default:
		t.Skip("runs only as the helper of another test")
	}
}

func runHelper(t *testing.T, which string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSuite$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+which, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestRunTurnsAPanicIntoAFailureOfItsCase(t *testing.T) {
	out, err := runHelper(t, "panic")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("helper suite: %v, want it to fail\n%s", err, out)
	}
	for _, want := range []string{
		"--- FAIL: TestHelperSuite/panics",
		"panic: assignment to entry in nil map",
		"suites.TestHelperSuite", // the panicking frame is in the stack shown
		"--- PASS: TestHelperSuite/passes",
		TimelineStart,
		"about to panic",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output of a suite whose first case panics does not contain %q:\n%s", want, out)
		}
	}
}

func TestRunStillReportsAGoroutineLeakedByTheCheck(t *testing.T) {
	out, err := runHelper(t, "leak")
	if err == nil || !strings.Contains(out, leftBehind) {
		t.Errorf("a check that leaves a goroutine blocked: err = %v, want synctest's report %q\n%s", err, leftBehind, out)
	}
}
