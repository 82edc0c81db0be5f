// Package fakeclock gives the lab suites virtual time.
//
// It is a thin layer over testing/synctest. Inside a bubble started by Run,
// time.Now, time.Sleep, timers, tickers and context deadlines all read a fake
// clock that starts at 2000-01-01 00:00:00 UTC and moves only when every
// goroutine in the bubble is blocked. Advance moves that clock forward by an
// exact amount and returns once the bubble is idle again, so a test can say
// "ten minutes later" and check what happened, in microseconds of real time.
//
// Code under test needs no clock parameter to be testable this way: it keeps
// calling the time package. Code that takes a clock anyway (a func() time.Time
// or a Clock) can be given Now.
package fakeclock

import (
	"testing"
	"testing/synctest"
	"time"
)

// Epoch is the instant at which every bubble's virtual clock starts.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Run runs f in a new synctest bubble with its own virtual clock. It returns
// when f and every goroutine it started have returned; a goroutine still
// blocked when f returns makes the test fail with a deadlock report, which is
// how a leaked worker shows up.
func Run(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// Advance moves virtual time forward by d and then waits until every other
// goroutine in the bubble is durably blocked. Timers that fall due on the way
// fire in order. It must be called from inside a bubble; a negative or zero d
// only waits.
func Advance(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
	synctest.Wait()
}

// Wait blocks until every other goroutine in the bubble is durably blocked,
// without moving the clock. It must be called from inside a bubble.
func Wait() {
	synctest.Wait()
}

// Now returns the current virtual time inside a bubble (and the wall clock
// outside one). It has the signature of a clock function, for code that takes
// one as a parameter.
func Now() time.Time {
	return time.Now()
}

// Elapsed returns the virtual time elapsed since Epoch, that is since the
// bubble started: the natural "t=" of a test's timeline.
func Elapsed() time.Duration {
	return time.Since(Epoch)
}
