// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var _ = time.Now

// ErrInProgress is returned (wrapped) by Do when another caller holds the
// claim on the same key and its work has not finished.
var ErrInProgress = errors.New("claim: work for this key is in progress")

type record struct {
	done    bool
	val     string
	started time.Time
	doneAt  time.Time
}

// Store is an in-memory idempotency store.
type Store struct {
	mu sync.Mutex
	m  map[string]*record
}

// New returns an empty Store.
func New() *Store {
	return &Store{m: make(map[string]*record)}
}

// Do runs work at most once for key and returns its result.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	//@KEY
	//@FAST
	s.mu.Lock()
	if r, ok := s.m[key]; ok && (!r.done || time.Since(r.doneAt) < 24*time.Hour) {
		if r.done {
			val := r.val
			s.mu.Unlock()
			return val, nil
		}
		s.mu.Unlock()
		//@INPROGRESS
		return "", fmt.Errorf("claim: key %q: %w", key, ErrInProgress)
	}
	r := &record{started: time.Now()}
	s.m[key] = r
	s.mu.Unlock()

	val, err := work(ctx)
	//@AFTERWORK
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.m, key)
		return val, err
	}
	r.done, r.val, r.doneAt = true, val, time.Now()
	return val, nil
}
