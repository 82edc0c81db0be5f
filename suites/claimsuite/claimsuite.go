// Package claimsuite is the conformance suite of lab 01 (claim before you
// execute). Run checks any implementation of Store; the lab's test file, the
// reference solution's test file and the grader all call it the same way:
//
//	func TestClaim(t *testing.T) { claimsuite.Run(t, New, ErrInProgress) }
//
// Every case gets a new store, built inside the case's bubble (see package
// suites), so a store may start goroutines in its constructor: an actor
// that owns the records and answers requests on a channel works as well as
// a map behind a mutex. If the store has a Close method, the suite calls it
// when the case ends.
package claimsuite

import (
	"context"
	"testing"

	"github.com/fourth-outcome/labkit/suites"
)

// Store is what lab 01 builds: Do runs work at most once per key.
type Store interface {
	Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error)
}

// Run runs lab 01's suite. newStore must return a new, empty store each time
// it is called; errInProgress is the sentinel a duplicate of a pending key is
// told (matched with errors.Is).
func Run[S Store](t *testing.T, newStore func() S, errInProgress error) {
	t.Helper()
	if errInProgress == nil {
		t.Fatal("claimsuite.Run: errInProgress is nil; pass the sentinel your Do wraps for a pending key")
	}
	suites.Run(t, Lab, tests, func(t *testing.T, _ *suites.History) target {
		s := newStore()
		suites.CloseAtEnd(t, s)
		return target{Store: s, errInProgress: errInProgress}
	})
}
