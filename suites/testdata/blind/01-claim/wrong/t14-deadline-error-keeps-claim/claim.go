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
	done bool
	val  string
}

// Store is an in-memory idempotency store. Call New.
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
	s.mu.Lock()
	if r, ok := s.m[key]; ok {
		done, val := r.done, r.val
		s.mu.Unlock()
		if done {
			return val, nil
		}
		return "", fmt.Errorf("claim: key %q: %w", key, ErrInProgress)
	}
	r := &record{}
	s.m[key] = r
	s.mu.Unlock()

	val, err := work(ctx)

	s.mu.Lock()
	if err != nil {
		// A timeout may have reached the provider: keep the claim so
		// nobody sends twice.
		if !errors.Is(err, context.DeadlineExceeded) {
			delete(s.m, key)
		}
	} else {
		r.done = true
		r.val = val
	}
	s.mu.Unlock()
	return val, err
}
