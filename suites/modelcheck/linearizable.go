package modelcheck

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fourth-outcome/labkit/suites"
)

// Op is one operation of a concurrent history: what a client called and
// what it observed, with the logical times (Recorder.Now) just before the
// call and just after the return. Input and Output are what the model's
// Step function is given. Action is the timeline's line at the call
// (`Do("k1")`) and Outcome its line at the return (`Do("k1") = "", in
// progress`), each a whole sentence of its own, since other clients' lines
// may come between them.
type Op struct {
	Client       int
	Call, Return int64
	Input        any
	Output       any
	Action       string
	Outcome      string
}

// Recorder collects the operations of one concurrent history. It is safe
// for concurrent use: every client records its own operations.
type Recorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []Op
}

// Now returns the next logical time. A client takes one just before it
// calls an operation and one just after the operation returns: if one
// operation's return time is less than another's call time, the first
// really returned before the second was called.
func (r *Recorder) Now() int64 { return r.clock.Add(1) }

// Add records an operation.
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
}

// Ops returns the operations recorded so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Linearizable checks concurrent histories, one per round (each against a
// new implementation), against model with porcupine. partition splits a
// history into independent parts (one per key), each checked on its own,
// which keeps every check small; nil checks each history whole. The checks
// share a time limit of budget in all.
//
// A part no order of whose operations, one at a time, gives what each
// observed fails the case, and that part becomes the timeline: every call
// and every return, in the order they happened. If no part failed but some
// ran out of time, the case is reported "not exercised"
// (suites.Inconclusive): porcupine's search is NP-complete in the worst
// case, and a check that did not finish proves nothing either way.
func Linearizable(t *testing.T, h *suites.History, model porcupine.Model, partition func([]Op) [][]Op, histories [][]Op, budget time.Duration) {
	t.Helper()
	model.Partition, model.PartitionEvent = nil, nil
	deadline := time.Now().Add(budget)
	unknown, checked := 0, 0
	for round, ops := range histories {
		parts := [][]Op{ops}
		if partition != nil {
			parts = partition(ops)
		}
		for _, part := range parts {
			if len(part) == 0 {
				continue
			}
			left := time.Until(deadline)
			if left <= 0 {
				unknown++
				continue
			}
			history := make([]porcupine.Operation, len(part))
			for i, op := range part {
				history[i] = porcupine.Operation{ClientId: op.Client, Input: op.Input, Output: op.Output, Call: op.Call, Return: op.Return}
			}
			checked++
			switch porcupine.CheckOperationsTimeout(model, history, left) {
			case porcupine.Illegal:
				h.Append(suites.Event{Actor: "test", Action: fmt.Sprintf(
					"round %d of %d: these %d operations overlapped for real; every call and every return, in the order they happened:",
					round+1, len(histories), len(part))})
				h.Append(timeline(part)...)
				t.Errorf("round %d: the concurrent history in the timeline is not linearizable: no order of its %d operations, one at a time, gives what each of them returned, so some call saw a state that no sequence of the calls could produce (a check and an act that another caller can come between, or a value read outside the lock)", round+1, len(part))
				return
			case porcupine.Unknown:
				unknown++
			}
		}
	}
	if unknown > 0 {
		suites.Inconclusive(t, "checking the concurrent histories for linearizability ran out of its %v on %d of %d parts; nothing wrong was found in the others", budget, unknown, checked+unknown)
	}
}

// timeline renders a history's calls and returns in logical-time order.
func timeline(ops []Op) []suites.Event {
	type point struct {
		at     int64
		call   bool
		op     Op
		client int
	}
	var points []point
	for _, op := range ops {
		points = append(points, point{at: op.Call, call: true, op: op}, point{at: op.Return, op: op})
	}
	sort.SliceStable(points, func(i, j int) bool { return points[i].at < points[j].at })
	out := make([]suites.Event, 0, len(points))
	for _, p := range points {
		actor := fmt.Sprintf("client %d", p.op.Client+1)
		if p.call {
			out = append(out, suites.Event{Actor: actor, Action: p.op.Action})
		} else {
			out = append(out, suites.Event{Actor: actor, Action: p.op.Outcome})
		}
	}
	return out
}
