// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type Store struct {
	mu      sync.Mutex
	results map[string]string
}

func New() *Store { return &Store{results: map[string]string{}} }

// Do looks up the key; if there's a stored result it's returned, otherwise
// the work runs and its result is recorded.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if v, ok := s.results[key]; ok {
		s.mu.Unlock()
		return v, nil
	}
	s.mu.Unlock()

	v, err := work(ctx)
	if err != nil {
		// nothing recorded, so the next caller retries
		return v, err
	}

	s.mu.Lock()
	s.results[key] = v
	s.mu.Unlock()
	return v, nil
}
