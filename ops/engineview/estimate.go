package engineview

import (
	"fmt"
	"math"
	"time"
)

// Estimate is how long the backlog takes to drain, by lab 09's arithmetic
// (docs/09-backpressure.md, "Calculate recovery, do not guess"): only the
// difference between the rate jobs finish and the rate they arrive drains
// it, so Drain is Backlog / (Finish - Arrival), and Never is true when jobs
// do not finish faster than they arrive.
type Estimate struct {
	// Window is the span the rates were measured over; zero means they
	// were not measured (fewer than two reads), and nothing else is set.
	Window time.Duration

	// Arrival is the rate jobs were submitted, and Finish the rate they
	// left the backlog (completed or dead-lettered), per second.
	Arrival float64
	Finish  float64

	// Backlog is the unfinished jobs (queued and leased) at the last read.
	Backlog int

	// Growth is Arrival minus Finish: the backlog's change per second.
	Growth float64

	// Drain is the time to drain the backlog: zero for an empty backlog,
	// the longest Duration when it does not fit one. Never is true instead
	// when Finish is not above Arrival and there is a backlog.
	Drain time.Duration
	Never bool
}

// Measured reports whether the rates were measured.
func (e Estimate) Measured() bool { return e.Window > 0 }

// Forecast applies lab 09's arithmetic to a backlog of jobs, jobs arriving
// at arrival per second and finishing at finish per second. The rates must
// be finite and not negative (a Monitor's are).
func Forecast(backlog int, arrival, finish float64) Estimate {
	e := Estimate{Arrival: arrival, Finish: finish, Backlog: backlog, Growth: arrival - finish}
	switch {
	case backlog <= 0:
		return e // nothing to drain, whatever the rates
	case finish <= arrival:
		e.Never = true // the backlog stays or grows: waiting does not help
		return e
	}
	ns := float64(backlog) / (finish - arrival) * float64(time.Second)
	if ns >= float64(math.MaxInt64) {
		e.Drain = time.Duration(math.MaxInt64)
		return e
	}
	e.Drain = time.Duration(math.Round(ns))
	return e
}

// String is the estimate in one line, as status prints it.
func (e Estimate) String() string {
	if !e.Measured() {
		return "not measured (rates need two reads over a window)"
	}
	rates := fmt.Sprintf("%.2f/s in, %.2f/s finished over %s", e.Arrival, e.Finish, e.Window.Round(time.Millisecond))
	switch {
	case e.Backlog == 0:
		return "nothing to drain (" + rates + ")"
	case e.Never:
		return fmt.Sprintf("never: %d unfinished, and jobs do not finish faster than they arrive (%s)", e.Backlog, rates)
	}
	return fmt.Sprintf("%s for %d unfinished (%s)", roundDur(e.Drain), e.Backlog, rates)
}

// roundDur rounds d for display: to the millisecond under a second, to a
// tenth of a second under a minute, to the second above.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d < 0:
		return -roundDur(-d)
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
