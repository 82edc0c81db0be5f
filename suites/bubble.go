package suites

import (
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/fourth-outcome/labkit/fakeclock"
)

// inBubble runs one case in a new fakeclock bubble: the history restarts at
// the bubble's t=0s, newImpl builds the implementation inside the bubble
// (through Construct), and check runs with panics turned into failures.
// Goroutines the implementation's constructors started and that are still
// blocked when the case ends are left behind (see the package
// documentation); any other leftover makes synctest's deadlock report end
// the test binary, as it would without this runner.
func inBubble[T any](t *testing.T, h *History, newImpl func(*testing.T, *History) T, check func(*testing.T, *History, T)) {
	t.Helper()
	var bubble int64
	defer func() {
		r := recover()
		background := backgrounds.end(bubble)
		if r != nil && !endedWithOnly(r, bubble, background) {
			panic(r)
		}
	}()
	fakeclock.Run(t, func(t *testing.T) {
		h.Restart()
		bubble = currentBubble()
		backgrounds.begin(bubble)
		var impl T
		if Guard(t, func() { impl = Construct(func() T { return newImpl(t, h) }) }) {
			Guard(t, func() { check(t, h, impl) })
		}
	})
}

// freshBubble is inBubble for a Fresh: f runs unguarded, and its panic (a
// model checker's failure, or the implementation's own panic) ends the
// bubble's root goroutine normally and is raised again in the caller once
// the bubble has ended.
func freshBubble[T any](t *testing.T, h *History, newImpl func(*testing.T, *History) T, f func(*testing.T, T)) {
	t.Helper()
	var (
		bubble   int64
		panicked bool
		value    any
	)
	func() {
		defer func() {
			r := recover()
			background := backgrounds.end(bubble)
			if r != nil && !endedWithOnly(r, bubble, background) {
				panic(r)
			}
		}()
		fakeclock.Run(t, func(t *testing.T) {
			h.Restart()
			bubble = currentBubble()
			backgrounds.begin(bubble)
			defer func() {
				if r := recover(); r != nil {
					panicked, value = true, r
				}
			}()
			impl := Construct(func() T { return newImpl(t, h) })
			f(t, impl)
		})
	}()
	if panicked {
		panic(value)
	}
}

// Construct calls newImpl, which builds the implementation under test or
// one more instance of it, and returns what it built. Goroutines started
// while newImpl runs are the implementation's own background goroutines:
// when the case ends they may still be blocked (an actor waiting for its
// next request), and are then left behind instead of being reported as a
// leak. Run builds every case's implementation through Construct; a check
// that builds more during the case (a worker process restarted after a
// crash, a store per simulated process) calls Construct itself, from a
// goroutine of the case's bubble. Outside a bubble it only calls newImpl.
func Construct[T any](newImpl func() T) T {
	bubble := currentBubble()
	if bubble == 0 || !backgrounds.running(bubble) {
		return newImpl()
	}
	before := goroutinesOf(bubble)
	v := newImpl()
	for id := range goroutinesOf(bubble) {
		if !before[id] {
			backgrounds.add(bubble, id)
		}
	}
	return v
}

// backgrounds holds, for the bubble of every case Run is running, the
// goroutines Construct saw the implementation start.
var backgrounds = backgroundSet{byBubble: map[int64]map[int64]bool{}}

type backgroundSet struct {
	sync.Mutex
	byBubble map[int64]map[int64]bool
}

func (b *backgroundSet) begin(bubble int64) {
	b.Lock()
	defer b.Unlock()
	b.byBubble[bubble] = map[int64]bool{}
}

func (b *backgroundSet) running(bubble int64) bool {
	b.Lock()
	defer b.Unlock()
	_, ok := b.byBubble[bubble]
	return ok
}

func (b *backgroundSet) add(bubble, id int64) {
	b.Lock()
	defer b.Unlock()
	if set, ok := b.byBubble[bubble]; ok {
		set[id] = true
	}
}

// end forgets bubble and returns its background goroutines.
func (b *backgroundSet) end(bubble int64) map[int64]bool {
	b.Lock()
	defer b.Unlock()
	set := b.byBubble[bubble]
	delete(b.byBubble, bubble)
	return set
}

// goroutinesOf returns the ids of the goroutines of bubble.
func goroutinesOf(bubble int64) map[int64]bool {
	ids := map[int64]bool{}
	for _, g := range goroutines() {
		if g.bubble == bubble {
			ids[g.id] = true
		}
	}
	return ids
}

// leftBehind is how synctest reports a bubble whose goroutines are still
// blocked after its root goroutine returned.
const leftBehind = "deadlock: main bubble goroutine has exited but blocked goroutines remain"

// endedWithOnly reports whether r is synctest's report of a bubble that
// ended with goroutines still blocked, all of them in background.
func endedWithOnly(r any, bubble int64, background map[int64]bool) bool {
	err, ok := r.(error)
	if !ok || err.Error() != leftBehind || bubble == 0 {
		return false
	}
	for id := range goroutinesOf(bubble) {
		if !background[id] {
			return false
		}
	}
	return true
}

// CloseAtEnd arranges for v's Close method, if it has one (Close() error or
// Close()), to be called when the case ends: inside its bubble, after the
// check returned, before the bubble waits for its goroutines. A suite calls
// it from newImpl with the implementation it built, so that an
// implementation that starts goroutines can stop them. An error or a panic
// from Close fails the case.
func CloseAtEnd(t testing.TB, v any) {
	t.Helper()
	switch c := v.(type) {
	case interface{ Close() error }:
		t.Cleanup(func() {
			Guard(t, func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close() at the end of the case = %v, want nil", err)
				}
			})
		})
	case interface{ Close() }:
		t.Cleanup(func() { Guard(t, c.Close) })
	}
}

// Guard runs f and turns a panic in it into a failure of t that shows the
// panic's value and stack (see PanicStack). It reports whether f returned
// normally. It is for f that runs the implementation under test: in a
// case's goroutine (Run guards every check) or in one the case starts.
func Guard(t testing.TB, f func()) (returned bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			noteCase(t.Name(), func(n *caseNote) { n.panicked = true })
			t.Errorf("panic: %v\n%s", r, PanicStack())
		}
	}()
	f()
	return true
}

// PanicStack returns the stack of a goroutine that is recovering from a
// panic, from the panic on (the frames of the recovery itself are
// dropped), cut to 30 lines. Call it in the deferred function that
// recovered.
func PanicStack() string {
	lines := strings.Split(string(debug.Stack()), "\n")
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
