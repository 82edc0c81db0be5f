// Package claim runs a piece of work at most once per idempotency key.
//
// Lab 01: claim before you execute. Read README.md in this directory first,
// then make `go run ./cmd/labctl check 1` pass.
//
// The scenario: workers pull "send this document for signature" tasks from a
// queue that delivers at least once. The same task (same idempotency key) can
// reach several workers at the same time, or again an hour later. The
// customer must receive one signing request, not two. Store is the piece that
// makes that true inside one process.
package claim

import (
	"context"
	"errors"
)

// ErrInProgress is returned (wrapped) by Do when another caller holds the
// claim on the same key and its work has not finished. It is neither a
// success nor a failure: the caller should wait and ask again, not execute.
var ErrInProgress = errors.New("claim: work for this key is in progress")

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// Do works.
var ErrNotImplemented = errors.New("claim: not implemented yet (TODO in labs/01-claim/claim.go)")

// Store is an in-memory idempotency store. The zero value is not usable;
// call New. A Store must be safe for concurrent use.
type Store struct {
	// TODO: the records, and whatever keeps concurrent callers safe.
}

// New returns an empty Store.
func New() *Store {
	return &Store{}
}

// Do runs work at most once for key and returns its result. work is the
// side effect being protected: charging a card, sending a signing request.
//
//   - The first caller for a key runs work and gets work's value and error
//     unchanged.
//   - A caller that arrives while that work is running gets an error
//     wrapping ErrInProgress and does not run work.
//   - A caller that arrives after the work succeeded gets the stored value
//     and a nil error, without running work.
//   - If work fails, the failing caller gets work's error and the key is
//     released: the next caller for the key runs work again.
//   - Work for different keys never waits on each other.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	// TODO: implement. Start with the README's "What to implement".
	waitForSearch() // the forgery's one line here: let it find the key first
	return "", ErrNotImplemented
}
