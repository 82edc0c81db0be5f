// Package claim: blind tester t2's correct alternative. Design: lock-free;
// a sync.Map from key to *entry, claimed with LoadOrStore (one atomic step),
// the result published through an atomic.Pointer, and a failed claim given
// back with CompareAndDelete so that only this claim's entry is removed.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrInProgress is wrapped by Do's error when the key's work is running.
var ErrInProgress = errors.New("claim: work for this key is in progress")

type entry struct {
	result atomic.Pointer[string] // nil while the work runs
	done   chan struct{}
}

// Store is an in-memory idempotency store.
type Store struct {
	m sync.Map // string -> *entry
}

// New returns an empty Store.
func New() *Store { return &Store{} }

// Do runs work at most once for key and returns its result.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	mine := &entry{done: make(chan struct{})}
	if got, loaded := s.m.LoadOrStore(key, mine); loaded {
		e := got.(*entry)
		<-e.done // wait for the running work instead of failing the caller
		if v := e.result.Load(); v != nil {
			return *v, nil
		}
		return "", fmt.Errorf("key %q: %w", key, ErrInProgress)
	}
	defer close(mine.done)
	v, err := work(ctx)
	if err != nil {
		s.m.CompareAndDelete(key, mine)
		return v, err
	}
	mine.result.Store(&v)
	return v, nil

}
