// Package claim runs a piece of work at most once per idempotency key.
//
// MISTAKE CATALOG ENTRY, not a solution: the key is only written once the work has finished, so every duplicate that arrives while it runs executes too.
//
// Mistake: record-after-execution
// Concept: claim-before-execute
//
// This file is the reference solution of lab 01 with one realistic bug. The whole pattern lives in one
// place: the key is claimed, atomically, before the work runs. A duplicate
// that arrives while the work is running finds a pending record and is told
// so; a duplicate that arrives afterwards finds the completed record and gets
// the stored result. Nobody executes the work twice.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrInProgress is returned (wrapped) by Do when another caller holds the
// claim on the same key and its work has not finished. It is neither a
// success nor a failure: the caller should wait and ask again, not execute.
var ErrInProgress = errors.New("claim: work for this key is in progress")

// state is where a key's record stands.
type state int

const (
	pending  state = iota + 1 // claimed; the work is running
	complete                  // the work succeeded; result holds its value
)

type record struct {
	state  state
	result string
}

// Store is an in-memory idempotency store. The zero value is not usable;
// call New. A Store is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	records map[string]*record
}

// New returns an empty Store.
func New() *Store {
	return &Store{records: make(map[string]*record)}
}

// Do runs work at most once for key and returns its result. work is the
// side effect being protected: charging a card, sending a signing request.
//
//   - The first caller for a key claims it, runs work, and gets work's value
//     and error unchanged.
//   - A caller that arrives while that work is running gets an error
//     wrapping ErrInProgress and does not run work.
//   - A caller that arrives after the work succeeded gets the stored value
//     and a nil error, without running work.
//   - If work fails, the claim is released: the failing caller gets work's
//     error, and the next caller for the key runs work again. This lab treats
//     a failed execution as one that had no effect; lab 03 deals with
//     failures that are ambiguous.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	if rec, claimed := s.claim(key); !claimed {
		if rec.state == complete {
			return rec.result, nil
		}
		return "", fmt.Errorf("do %q: %w", key, ErrInProgress)
	}

	return s.execute(ctx, key, work)
}

// execute runs work for a key this caller has claimed and settles the claim:
// complete on success, released on failure. A panicking work function also
// releases the claim (and keeps panicking), so a crash inside work never
// leaves its key pending forever.
func (s *Store) execute(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (value string, err error) {
	settled := false
	defer func() {
		if !settled {
			s.release(key)
		}
	}()
	value, err = work(ctx)
	settled = true
	if err != nil {
		s.release(key)
		return value, err
	}
	s.complete(key, value)
	return value, nil
}

// claim is the atomic check-and-insert: under one lock it looks the key up
// and, if it is absent, inserts a pending record. It returns the existing
// record and false when the key was already claimed.
func (s *Store) claim(key string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.records[key]; ok {
		return *rec, false
	}
	// Nothing to record yet: complete() writes the record when the work is done.
	return record{}, true
}

// complete stores the result of a successful execution.
func (s *Store) complete(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key] = &record{state: complete, result: value}
}

// release forgets a pending claim after a failed execution.
func (s *Store) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}
