// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

// Store keeps one string per key: "" while the work is pending (the key is
// present in the map), the work's value once it has succeeded.
type Store struct {
	mu      sync.Mutex
	results map[string]string
}

func New() *Store { return &Store{results: map[string]string{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if v, ok := s.results[key]; ok {
		s.mu.Unlock()
		if v == "" {
			return "", fmt.Errorf("%s: %w", key, ErrInProgress)
		}
		return v, nil
	}
	s.results[key] = "" // claimed, pending
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.results, key)
		return v, err
	}
	s.results[key] = v
	return v, nil
}
