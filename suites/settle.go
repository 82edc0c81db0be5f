package suites

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Call is a function running in its own goroutine, started by Go, whose
// progress the suite can inspect without waiting on any clock.
//
// Suites need this because of one limit of testing/synctest: a goroutine
// waiting on a sync.Mutex is not "durably blocked", so a bubble whose
// goroutines wait on a mutex held across a virtual sleep never advances its
// clock and hangs. Student code that holds a lock while the work runs is a
// mistake the suites must report quickly, not a hang. So the suites keep
// work functions gated by channels they control, and use Settle to tell
// "this call finished" from "this call is stuck waiting for something".
type Call struct {
	id   int64
	done chan struct{}
}

// Go starts f in a new goroutine and returns once that goroutine is known.
func Go(f func()) *Call {
	c := &Call{done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(c.done)
		c.id = goroutineID()
		close(started)
		f()
	}()
	<-started
	return c
}

// Done returns a channel that is closed when the call returns.
func (c *Call) Done() <-chan struct{} { return c.done }

// Returned reports whether the call has returned.
func (c *Call) Returned() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Wait blocks until the call returns.
func (c *Call) Wait() { <-c.done }

// Settle waits until the call has either returned (true) or is parked
// waiting for something (a lock, a channel, a condition, a sleep) in several
// consecutive looks at its stack (false). Inside a bubble the call counts as
// parked only while every other goroutine of the bubble is parked too, so a
// call waiting for an answer from a goroutine that is still running (an
// actor that owns the state) is not taken for a stuck one. Settle never
// waits on a clock, so it works inside and outside a fakeclock bubble. A
// call that keeps running without parking or returning is reported as stuck
// after a bounded number of looks.
func (c *Call) Settle() bool {
	const needParked = 3
	const maxLooks = 20000
	self := goroutineID()
	parked := 0
	for range maxLooks {
		if c.Returned() {
			return true
		}
		if c.parked(self) {
			parked++
			if parked >= needParked {
				return c.Returned()
			}
		} else {
			parked = 0
		}
		runtime.Gosched()
	}
	return c.Returned()
}

// parked reports whether the call's goroutine is parked and, when it is in
// a bubble, every goroutine of that bubble but self is parked too.
func (c *Call) parked(self int64) bool {
	all := goroutines()
	var me *goroutine
	for i := range all {
		if all[i].id == c.id {
			me = &all[i]
			break
		}
	}
	if me == nil || !isParked(me.state) {
		return false
	}
	if me.bubble == 0 {
		return true
	}
	for _, g := range all {
		if g.bubble == me.bubble && g.id != self && !isParked(g.state) {
			return false
		}
	}
	return true
}

func isParked(state string) bool {
	switch {
	case state == "", state == "running", state == "runnable", state == "preempted", state == "copystack",
		strings.HasPrefix(state, "syscall"):
		return false
	}
	return true
}

// goroutine is one goroutine as the runtime's stack dump describes it.
type goroutine struct {
	id     int64
	state  string // the wait reason: "running", "sync.Mutex.Lock", "chan receive", "select"
	bubble int64  // the synctest bubble it belongs to, 0 for none
}

var stackBuf struct {
	sync.Mutex
	b []byte
}

// goroutines lists every goroutine of the process.
func goroutines() []goroutine {
	stackBuf.Lock()
	defer stackBuf.Unlock()
	if stackBuf.b == nil {
		stackBuf.b = make([]byte, 1<<20)
	}
	for {
		n := runtime.Stack(stackBuf.b, true)
		if n < len(stackBuf.b) {
			return parseGoroutines(stackBuf.b[:n])
		}
		stackBuf.b = make([]byte, 2*len(stackBuf.b))
	}
}

// parseGoroutines reads the header lines of a stack dump:
//
//	goroutine 35 [chan receive (durable), 2 minutes, synctest bubble 3]:
func parseGoroutines(dump []byte) []goroutine {
	var out []goroutine
	for line := range bytes.Lines(dump) {
		rest, ok := bytes.CutPrefix(line, []byte("goroutine "))
		if !ok {
			continue
		}
		id, rest, ok := bytes.Cut(rest, []byte(" ["))
		if !ok {
			continue
		}
		inside, _, ok := bytes.Cut(rest, []byte("]:"))
		if !ok {
			continue
		}
		g := goroutine{}
		g.id, _ = strconv.ParseInt(string(id), 10, 64)
		for i, part := range strings.Split(string(inside), ", ") {
			if i == 0 {
				// "chan receive (durable)", "select (scan)": keep the reason only.
				g.state, _, _ = strings.Cut(part, " (")
				continue
			}
			if b, ok := strings.CutPrefix(part, "synctest bubble "); ok {
				g.bubble, _ = strconv.ParseInt(b, 10, 64)
			}
		}
		out = append(out, g)
	}
	return out
}

// currentBubble returns the bubble of the calling goroutine, 0 for none.
func currentBubble() int64 {
	var buf [128]byte
	n := runtime.Stack(buf[:], false)
	header, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	for _, g := range parseGoroutines(append(header, '\n')) {
		return g.bubble
	}
	return 0
}

func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	s := strings.TrimPrefix(string(buf[:n]), "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		id, _ := strconv.ParseInt(s[:i], 10, 64)
		return id
	}
	return -1
}
