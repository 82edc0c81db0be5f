package suites

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestHistoryTimelineOnVirtualTime(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		h := NewHistory()
		h.Record("worker A", `Do("k1")`, "executed")
		fakeclock.Advance(1500 * time.Millisecond)
		h.Record("worker B", `Do("k1")`, "executed again")
		h.Note("advance %v", time.Minute)
		got := h.Timeline()
		want := strings.Join([]string{
			TimelineStart,
			`t=0s       worker A  Do("k1") -> executed`,
			`t=1.5s     worker B  Do("k1") -> executed again`,
			`t=1.5s     test      advance 1m0s`,
			TimelineEnd,
		}, "\n")
		if got != want {
			t.Errorf("Timeline() =\n%s\nwant\n%s", got, want)
		}
	})
}

func TestHistoryTimelineEmptyAndLong(t *testing.T) {
	h := NewHistory()
	if got := h.Timeline(); got != "" {
		t.Errorf("Timeline() of an empty history = %q, want \"\"", got)
	}
	for i := range 100 {
		h.Recordf("w", "step", "%d", i)
	}
	got := h.Timeline()
	if !strings.Contains(got, "... 60 more events ...") || !strings.Contains(got, "-> 99") || !strings.Contains(got, "-> 0\n") {
		t.Errorf("long timeline should keep the first and last 20 events and say how many were cut:\n%s", got)
	}
}

func TestSettle(t *testing.T) {
	t.Run("returns true for a call that finishes", func(t *testing.T) {
		c := Go(func() {})
		if !c.Settle() {
			t.Error("Settle() = false for a call that returns at once, want true")
		}
	})
	t.Run("returns false for a call stuck on a mutex", func(t *testing.T) {
		var mu sync.Mutex
		mu.Lock()
		c := Go(func() { mu.Lock(); mu.Unlock() })
		if c.Settle() {
			t.Error("Settle() = true for a call waiting on a held mutex, want false")
		}
		mu.Unlock()
		c.Wait()
	})
	t.Run("returns false for a call stuck on a channel inside a bubble", func(t *testing.T) {
		fakeclock.Run(t, func(t *testing.T) {
			ch := make(chan struct{})
			c := Go(func() { <-ch })
			if c.Settle() {
				t.Error("Settle() = true for a call waiting on a channel, want false")
			}
			close(ch)
			c.Wait()
		})
	})
}

func TestSettleWaitsForTheBubbleToGoQuiet(t *testing.T) {
	// A call that waits for an answer from a goroutine that is still busy
	// (an actor working through its queue) is not stuck.
	fakeclock.Run(t, func(t *testing.T) {
		requests := make(chan chan int)
		go func() {
			for reply := range requests {
				for range 2000 {
					runtime.Gosched() // busy, never parked
				}
				reply <- 1
			}
		}()
		defer close(requests)
		c := Go(func() {
			reply := make(chan int)
			requests <- reply
			<-reply
		})
		if !c.Settle() {
			t.Error("Settle() = false for a call whose answer was still being computed, want true")
		}
		if !c.Returned() {
			t.Error("Returned() = false after Settle() = true")
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done() is not closed after the call returned")
		}
	})
}

func TestParseGoroutines(t *testing.T) {
	dump := []byte("goroutine 1 [running]:\nmain.main()\n\n" +
		"goroutine 35 [chan receive (durable), 2 minutes, synctest bubble 3]:\nx()\n\n" +
		"goroutine 36 [sync.Mutex.Lock, synctest bubble 3]:\n")
	got := parseGoroutines(dump)
	want := []goroutine{{1, "running", 0}, {35, "chan receive", 3}, {36, "sync.Mutex.Lock", 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseGoroutines() = %v, want %v", got, want)
	}
}

// TestQuiet: a call counts as stuck only when every goroutine of its
// bubble is parked, and a goroutine of no bubble that is on its way (the
// runtime takes a goroutine out of its bubble while it starts or assists a
// garbage collection) may be one of the bubble's.
func TestQuiet(t *testing.T) {
	const self, call = 1, 2
	base := []goroutine{{self, "running", 3}, {call, "chan receive", 3}, {21, "chan receive", 0}}
	for _, tt := range []struct {
		name  string
		other goroutine
		want  bool
	}{
		{"the bubble's actor waits for a request", goroutine{5, "select", 3}, true},
		{"the bubble's actor is running", goroutine{5, "runnable", 3}, false},
		{"a goroutine of no bubble is runnable (an actor starting a collection)", goroutine{5, "runnable", 0}, false},
		{"a goroutine of no bubble waits on a runtime semaphore", goroutine{5, "semacquire", 0}, false},
		{"a goroutine of no bubble waits on a channel", goroutine{5, "chan receive", 0}, true},
		{"a goroutine of another bubble is running", goroutine{5, "runnable", 4}, true},
	} {
		all := append(slices.Clone(base), tt.other)
		if got := quiet(all, call, self); got != tt.want {
			t.Errorf("%s: quiet() = %v, want %v", tt.name, got, tt.want)
		}
	}
	if quiet([]goroutine{{self, "running", 3}, {call, "semacquire", 0}}, call, self) {
		t.Error("quiet() = true for a call of self's bubble out of it on a runtime semaphore (starting a collection), want false")
	}
	if quiet([]goroutine{{self, "running", 0}, {call, "semacquire", 0}}, call, self) {
		t.Error("quiet() = true for a call of no bubble on a runtime semaphore, want false")
	}
	if !quiet([]goroutine{{self, "running", 0}, {call, "chan receive", 0}}, call, self) {
		t.Error("quiet() = false for a call of no bubble waiting on a channel, want true")
	}
	if quiet([]goroutine{{self, "running", 3}, {call, "runnable", 3}}, call, self) {
		t.Error("quiet() = true for a call that is runnable, want false")
	}
	if quiet([]goroutine{{self, "running", 3}}, call, self) {
		t.Error("quiet() = true for a call that has returned (no goroutine), want false")
	}
}

func TestSeed(t *testing.T) {
	t.Setenv(SeedEnv, "")
	a, b := Seed(t), Seed(t)
	if a != b {
		t.Errorf("Seed() = %d then %d for the same test, want the same", a, b)
	}
	t.Run("other", func(t *testing.T) {
		if Seed(t) == a {
			t.Errorf("Seed() is the same for two different tests")
		}
	})
	t.Setenv(SeedEnv, "42")
	if got := Seed(t); got != 42 {
		t.Errorf("Seed() with %s=42 = %d, want 42", SeedEnv, got)
	}
}

func TestValidate(t *testing.T) {
	good := Lab{Number: 9, Slug: "x", TestName: "TestX",
		Concepts: []Concept{{ID: "c", Title: "T", Misconception: "M", Hint: "H", Docs: "docs/x.md#t"}},
		Cases:    []Case{{Name: "a_case", Concept: "c", Points: 100, Explanation: "E"}},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate() on a good lab = %v", err)
	}
	tests := []struct {
		name   string
		mutate func(l *Lab)
		want   string
	}{
		{"unknown concept", func(l *Lab) { l.Cases[0].Concept = "nope" }, "unknown concept"},
		{"no points", func(l *Lab) { l.Cases[0].Points = 0 }, "points"},
		{"no explanation", func(l *Lab) { l.Cases[0].Explanation = "" }, "no explanation"},
		{"space in name", func(l *Lab) { l.Cases[0].Name = "a case" }, "spaces"},
		{"duplicate", func(l *Lab) { l.Cases = append(l.Cases, l.Cases[0]) }, "duplicate"},
		{"concept without hint", func(l *Lab) { l.Concepts[0].Hint = "" }, "every field"},
		{"bad test name", func(l *Lab) { l.TestName = "Claim" }, "must start with Test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := good
			l.Cases = append([]Case(nil), good.Cases...)
			l.Concepts = append([]Concept(nil), good.Concepts...)
			tt.mutate(&l)
			err := l.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

// TestReplayCommand: a failing case's replay command is the way the
// learner runs labctl (labctl check passes it in ProgEnv), and a go run
// from the kit root without it.
func TestReplayCommand(t *testing.T) {
	t.Setenv(ProgEnv, "../../bin/labctl")
	if got, want := replayCommand(4, 7), "../../bin/labctl check 4 --seed 7"; got != want {
		t.Errorf("replayCommand(4, 7) with %s set = %q, want %q", ProgEnv, got, want)
	}
	t.Setenv(ProgEnv, "")
	if got, want := replayCommand(4, 7), "go run ./cmd/labctl check 4 --seed 7, from the kit's root"; got != want {
		t.Errorf("replayCommand(4, 7) without %s = %q, want %q", ProgEnv, got, want)
	}
}

func TestIsParked(t *testing.T) {
	for state, want := range map[string]bool{
		"chan receive": true, "select": true, "sync.Mutex.Lock": true, "sleep": true, "sync.WaitGroup.Wait": true,
		"running": false, "runnable": false, "": false, "preempted": false, "syscall": false,
		"GC assist wait": false, "GC assist marking": false, "wait for GC cycle": false, "stopping the world": false,
	} {
		if got := isParked(state); got != want {
			t.Errorf("isParked(%q) = %v, want %v", state, got, want)
		}
	}
}
