// Package claim runs a piece of work at most once per idempotency key.
//
// This implementation keeps its records in a sync.Map: a key's entry is
// looked up with Load and, when absent, inserted with Store, published as done through an
// atomic flag, and removed with CompareAndDelete when the work fails.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrInProgress is returned (wrapped) by Do when another caller holds the
// claim on the same key and its work has not finished. It is neither a
// success nor a failure: the caller should wait and ask again, not execute.
var ErrInProgress = errors.New("claim: work for this key is in progress")

// entry is one key's record. val is written once, before done is set, and
// read only after done was seen true.
type entry struct {
	done atomic.Bool
	val  string
}

// Store is an in-memory idempotency store. The zero value is not usable;
// call New. A Store must be safe for concurrent use.
type Store struct {
	m sync.Map // string -> *entry
}

// New returns an empty Store.
func New() *Store {
	return &Store{}
}

// Do runs work at most once for key and returns its result.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	// Look first: most calls are for keys already seen, and Load is
	// cheaper than allocating an entry for LoadOrStore.
	if got, ok := s.m.Load(key); ok {
		e := got.(*entry)
		if e.done.Load() {
			return e.val, nil
		}
		return "", fmt.Errorf("claim: key %q: %w", key, ErrInProgress)
	}
	mine := &entry{}
	s.m.Store(key, mine)
	val, err := work(ctx)
	if err != nil {
		s.m.CompareAndDelete(key, mine)
		return val, err
	}
	mine.val = val
	mine.done.Store(true)
	return val, nil
}
