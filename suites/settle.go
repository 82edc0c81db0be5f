package suites

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
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

// settleBudget is the least real time Settle looks at a call that keeps
// running before it reports the call as stuck.
const settleBudget = 2 * time.Second

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
// after a bounded number of looks and settleBudget of real time: on a busy
// machine a runnable goroutine can wait that long for a CPU, and a correct
// call must not be taken for a stuck one then.
func (c *Call) Settle() bool {
	const needParked = 3
	const maxLooks = 20000
	self := goroutineID()
	parked := 0
	giveUp := RealNow().Add(settleBudget)
	for looks := 0; looks < maxLooks || RealNow().Before(giveUp); looks++ {
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
	return quiet(goroutines(), c.id, self)
}

// quiet reports, from a list of the process's goroutines, whether goroutine
// id is parked and, when it is in a bubble, every goroutine of that bubble
// but self is parked too.
//
// A goroutine of no bubble may be one of the bubble's for the moment: the
// runtime takes a goroutine out of its bubble while it starts a garbage
// collection cycle or assists one (runtime/mgc.go, runtime/mgcmark.go), and
// its stack header then names no bubble. So a goroutine of no bubble that
// is not parked, or that waits on one of the runtime's own semaphores
// ("semacquire": the collector's, or the one a stack dump holds while it
// stops the world), counts as one of the bubble's still on its way: an
// actor caught starting a collection is not missing from its bubble, and
// a call waiting for its answer is not taken for a stuck one. The
// goroutines a test binary runs outside any bubble otherwise wait on
// channels, so this delays no verdict on a call that is really stuck.
func quiet(all []goroutine, id, self int64) bool {
	var me *goroutine
	for i := range all {
		if all[i].id == id {
			me = &all[i]
			break
		}
	}
	if me == nil || !isParked(me.state) {
		return false
	}
	var selfBubble int64
	for _, g := range all {
		if g.id == self {
			selfBubble = g.bubble
		}
	}
	if me.bubble == 0 && (selfBubble != 0 || me.state == "semacquire") {
		// The call was started in self's bubble and is out of it for the
		// moment: it is starting or assisting a collection, where it waits
		// on the runtime's own semaphores (the collector's, or the one a
		// stack dump holds while it stops the world, which Settle's own
		// looks take again and again). It is on its way, not stuck: a
		// correct call that allocates a 70 KB key on a busy machine was
		// taken for a stuck one this way.
		return false
	}
	if me.bubble == 0 {
		return true
	}
	for _, g := range all {
		if g.id == self || g.id == id {
			continue
		}
		switch g.bubble {
		case me.bubble:
			if !isParked(g.state) {
				return false
			}
		case 0:
			if !isParked(g.state) || g.state == "semacquire" {
				return false
			}
		}
	}
	return true
}

// isParked reports whether a goroutine in the given wait state waits for
// another goroutine or for time: a channel, a lock, a condition, a sleep.
// Anything else, the runtime's own waits included ("GC assist wait", "wait
// for GC cycle", "stopping the world", "preempted"), passes by itself, so a
// call caught in one of them is still on its way: a call that allocates a
// large key on a busy machine under -race waits for the collector in "GC
// assist wait", and must not be taken for a stuck one.
func isParked(state string) bool {
	switch state {
	case "chan receive", "chan send", "select", "semacquire", "sleep", "coroutine", "IO wait",
		"sync.Cond.Wait", "sync.Mutex.Lock", "sync.RWMutex.RLock", "sync.RWMutex.Lock", "sync.WaitGroup.Wait",
		"synctest.Run", "synctest.Wait":
		return true
	}
	return false
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
