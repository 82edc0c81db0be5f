// Package fencingsuite is the conformance suite of lab 06 (fencing tokens
// against zombie workers). Run checks a lock service that grants fencing
// tokens and the store those tokens protect; the lab's test file, the
// reference solution's test file and the grader all call it the same way:
//
//	func TestFencing(t *testing.T) { fencingsuite.Run(t, NewLocks, NewStore) }
//
// The suite plays the workers itself. Worker A takes the lock on a
// resource, writes, and stalls past its lease; worker B is granted the
// lock and writes; A wakes up and writes again. Every call goes to the
// student's lock service and store, on virtual time, so a 30-second pause
// or a lease that ends three days later takes no time, and the timeline of
// a failing case shows who held which grant and token when, and what the
// store accepted or refused. The store cases use tokens the suite chooses
// (33, 35, 2^64-1), so the store is judged on its own; the zombie and
// skipped-token cases run the two together, end to end.
//
// The store keeps its values in a KV the suite supplies: plain storage with
// Get and Put and no conditional write. Through it the suite fails calls,
// cancels the caller's context in the middle of a Write, and holds one
// Write's Put while another Write arrives, which shows deterministically
// whether the store's check and write are one step.
//
// One case races Acquires of one resource. Graded by labctl, the lock
// service's "sync" import points at suites/syncpoint and the suite picks,
// from the case's seed, which worker runs at every Lock and Unlock, so a
// check and a grant split over two lock sections is caught on every run;
// then the workers race on the real scheduler for the race detector.
//
// Every case builds its own lock services and stores, inside the case's
// bubble (see package suites), so either may start goroutines in its
// constructor; if it has a Close method, the suite calls it when the case
// ends.
//
// The types a lock service and a store share with the suite (Grant,
// FencingToken, FencedValue, LockOptions and the errors) are those of
// package task, which the lab's package re-exports.
package fencingsuite

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Run runs lab 06's suite. newLocks builds a new lock service with no
// grants, configured by its options (it is called several times per case,
// with different TTLs); newStore builds a store over the (empty) KV it is
// given.
func Run[L task.LockService, S task.FencedStore](t *testing.T, newLocks func(task.LockOptions) (L, error), newStore func(task.KV) S) {
	t.Helper()
	if newLocks == nil || newStore == nil {
		t.Fatal("fencingsuite.Run: a constructor is nil; pass your NewLocks and NewStore")
	}
	suites.Run(t, Lab, tests, func(*testing.T, *suites.History) target {
		return target{
			newLocks: func(o task.LockOptions) (task.LockService, error) {
				l, err := newLocks(o)
				if err != nil {
					return nil, err
				}
				return l, nil
			},
			newStore: func(kv task.KV) task.FencedStore { return newStore(kv) },
		}
	})
}
