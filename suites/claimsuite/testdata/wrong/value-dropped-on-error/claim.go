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
}

type Store struct {
	mu      sync.Mutex
	records map[string]*record
}

func New() *Store { return &Store{records: map[string]*record{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if r, ok := s.records[key]; ok {
		done, val := r.done, r.val
		s.mu.Unlock()
		if done {
			return val, nil
		}
		return "", fmt.Errorf("%s: %w", key, ErrInProgress)
	}
	r := &record{}
	s.records[key] = r
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.records, key)
		return "", err // Go convention: no value with an error
	}
	r.done, r.val = true, v
	return v, nil
}
