// Package deadlettersuite is the conformance suite of lab 07
// (dead-lettering by delivery count). Run checks a queue that counts
// deliveries, dead-letters a task after MaxDeliveries deliveries without an
// acknowledgement, dead-letters a malformed task before anyone receives
// it, and redrives a dead letter with a fresh count. The lab's test file,
// the reference solution's test file and the grader all call it the same
// way:
//
//	func TestDeadletter(t *testing.T) { deadlettersuite.Run(t, New) }
//
// The cases play producers, consumers and an operator against the
// student's queue on virtual time. A consumer that crashes is one that
// received a task and never says another word: the suite simply lets the
// delivery's visibility timeout pass. A delivery that should end at
// t=30s is checked at t=30s minus a nanosecond and at t=30s exactly, and
// again days later. The validator is the suite's own, and fails, panics or
// holds still while the suite calls the queue from elsewhere. Every call
// and its answer goes into the case's timeline: who received which task
// with which delivery count, who acknowledged or nacked it, and what the
// dead-letter queue held after each move.
//
// Every case builds its own queues, inside the case's bubble (see package
// suites), so a queue may start goroutines in its constructor: an actor
// that owns both queues works as well as two maps behind one mutex. If the
// queue has a Close method, the suite calls it when the case ends.
//
// The types a queue shares with the suite (Task, Message, Receipt,
// DeadLetter, DeadLetterOptions and the errors) are those of package task,
// which the lab's package re-exports.
package deadlettersuite

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Queue is the queue lab 07 builds, as the suite sees it: the whole
// task.DeadLetterQueue.
type Queue = task.DeadLetterQueue

// Run runs lab 07's suite. newQueue builds a new, empty queue with the
// options it is given; the suite calls it at least once per case, and
// passes options a queue must refuse, too.
func Run[Q Queue](t *testing.T, newQueue func(task.DeadLetterOptions) (Q, error)) {
	t.Helper()
	if newQueue == nil {
		t.Fatal("deadlettersuite.Run: newQueue is nil; pass your New")
	}
	suites.Run(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
		return &target{t: t, h: h, build: func(o task.DeadLetterOptions) (Queue, error) {
			q, err := newQueue(o)
			if err != nil {
				return nil, err
			}
			suites.CloseAtEnd(t, q)
			return q, nil
		}}
	})
}
