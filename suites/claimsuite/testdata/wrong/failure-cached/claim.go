// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type record struct {
	done bool
	val  string
	err  error
}

// Store records the outcome of every key, success or failure, so a
// duplicate always gets the same answer as the first caller.
type Store struct {
	mu      sync.Mutex
	records map[string]*record
}

func New() *Store { return &Store{records: map[string]*record{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if r, ok := s.records[key]; ok {
		done, val, err := r.done, r.val, r.err
		s.mu.Unlock()
		if !done {
			return "", fmt.Errorf("%s: %w", key, ErrInProgress)
		}
		return val, err
	}
	r := &record{}
	s.records[key] = r
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	r.done, r.val, r.err = true, v, err
	s.mu.Unlock()
	return v, err
}
