// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrInProgress is returned (wrapped) by Do when another caller holds the
// claim on the same key and its work has not finished.
var ErrInProgress = errors.New("claim: work for this key is in progress")

type record struct {
	done  bool
	value string
}

// Store is an in-memory idempotency store. Call New.
type Store struct {
	mu   sync.Mutex
	recs map[string]*record
}

// New returns an empty Store.
func New() *Store {
	return &Store{recs: make(map[string]*record)}
}

// Do runs work at most once for key and returns its result.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if r, ok := s.recs[key]; ok {
		done, value := r.done, r.value
		s.mu.Unlock()
		if done {
			return value, nil
		}
		return "", fmt.Errorf("claim: key %q: %w", key, ErrInProgress)
	}
	r := &record{}
	s.recs[key] = r
	s.mu.Unlock()

	value, err := work(ctx)

	s.mu.Lock()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		delete(s.recs, key)
	} else if err == nil {
		r.value = value
		r.done = true
	}
	s.mu.Unlock()
	return value, err
}
