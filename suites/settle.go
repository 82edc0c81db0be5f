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

// Done reports whether the call has returned.
func (c *Call) Done() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Finished returns a channel closed when the call returns.
func (c *Call) Finished() <-chan struct{} { return c.done }

// Wait blocks until the call returns.
func (c *Call) Wait() { <-c.done }

// Settle waits until the call has either returned (true) or is parked
// waiting for something (a lock, a channel, a condition, a sleep) in several
// consecutive looks at its stack (false). It never waits on a clock, so it
// works inside and outside a fakeclock bubble. A call that keeps running
// without parking or finishing counts as finished after a bounded number of
// looks only if it returns; otherwise Settle reports it as stuck.
func (c *Call) Settle() bool {
	const needParked = 3
	const maxLooks = 20000
	parked := 0
	for range maxLooks {
		if c.Done() {
			return true
		}
		if isParked(goroutineState(c.id)) {
			parked++
			if parked >= needParked {
				return c.Done()
			}
		} else {
			parked = 0
		}
		runtime.Gosched()
	}
	return c.Done()
}

// SettleAll settles every call and reports which ones are still running.
func SettleAll(calls ...*Call) (stuck []int) {
	for i, c := range calls {
		if !c.Settle() {
			stuck = append(stuck, i)
		}
	}
	return stuck
}

func isParked(state string) bool {
	switch {
	case state == "", state == "running", state == "runnable", strings.HasPrefix(state, "syscall"):
		return false
	}
	return true
}

var stackBuf struct {
	sync.Mutex
	b []byte
}

// goroutineState returns the wait reason of goroutine id as the runtime
// prints it ("running", "sync.Mutex.Lock", "chan receive", "select"), or ""
// if there is no such goroutine.
func goroutineState(id int64) string {
	stackBuf.Lock()
	defer stackBuf.Unlock()
	if stackBuf.b == nil {
		stackBuf.b = make([]byte, 1<<20)
	}
	for {
		n := runtime.Stack(stackBuf.b, true)
		if n < len(stackBuf.b) {
			return findState(stackBuf.b[:n], id)
		}
		stackBuf.b = make([]byte, 2*len(stackBuf.b))
	}
}

func findState(dump []byte, id int64) string {
	prefix := []byte("goroutine " + strconv.FormatInt(id, 10) + " [")
	i := bytes.Index(dump, prefix)
	if i < 0 {
		return ""
	}
	rest := dump[i+len(prefix):]
	j := bytes.IndexByte(rest, ']')
	if j < 0 {
		return ""
	}
	state := string(rest[:j])
	// "chan receive, 2 minutes", "select (durable)": keep the reason only.
	if k := strings.IndexAny(state, ",("); k >= 0 {
		state = strings.TrimSpace(state[:k])
	}
	return state
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
