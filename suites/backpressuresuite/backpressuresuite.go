// Package backpressuresuite is the conformance suite of lab 09 (bounded
// admission and backlog math). Run checks an admission queue that holds at
// most Capacity jobs waiting, refuses a job it has no room for at once or
// after a bounded wait, admits a job before it claims the job's
// idempotency key, bounds each tenant's share, and reports the age of its
// oldest job and its completion latency; and the backlog arithmetic that
// says how fast a backlog grows and when it drains. The lab's test file,
// the reference solution's test file and the grader all call it the same
// way:
//
//	func TestBackpressure(t *testing.T) {
//		backpressuresuite.Run(t, New, ForecastBacklog)
//	}
//
// The cases play producers of several tenants, workers and a dashboard
// against the student's queue on virtual time. The claim store the queue
// is given is the suite's own: it records every key claimed, fails when a
// case wants it to, and holds a claim still while the case calls the queue
// from elsewhere. A Submit that should be refused at once is checked to
// return without the clock moving; one that should wait until a deadline
// is checked a nanosecond before it and at it, with the context's deadline
// and MaxWait in both orders. Every call and its answer goes into the
// case's timeline.
//
// Every case builds its own queues, inside the case's bubble (see package
// suites), so a queue may start goroutines in its constructor. If the
// queue has a Close method, the suite calls it when the case ends.
//
// The types a queue shares with the suite (AdmissionOptions, KeyClaimer,
// Admitted, Ticket, AdmissionStats, BacklogForecast and the errors) are
// those of package task, which the lab's package re-exports.
package backpressuresuite

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Queue is the queue lab 09 builds, as the suite sees it: the whole
// task.AdmissionQueue.
type Queue = task.AdmissionQueue

// Forecast is the backlog arithmetic lab 09 writes: what becomes of a
// backlog of jobs with arrival jobs arriving and capacity jobs done per
// second.
type Forecast = func(backlog int, arrival, capacity float64) (task.BacklogForecast, error)

// Run runs lab 09's suite. newQueue builds a new, empty queue with the
// options it is given; the suite calls it at least once per case. forecast
// is the lab's backlog arithmetic.
func Run[Q Queue](t *testing.T, newQueue func(task.AdmissionOptions) Q, forecast Forecast) {
	t.Helper()
	if newQueue == nil {
		t.Fatal("backpressuresuite.Run: newQueue is nil; pass your New")
	}
	if forecast == nil {
		t.Fatal("backpressuresuite.Run: forecast is nil; pass your ForecastBacklog")
	}
	suites.Run(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
		return &target{t: t, h: h, forecast: forecast, build: func(o task.AdmissionOptions) Queue {
			q := newQueue(o)
			suites.CloseAtEnd(t, q)
			return q
		}}
	})
}
