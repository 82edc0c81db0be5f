// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type entry struct {
	done bool
	val  string
}

type Store struct {
	mu      sync.RWMutex
	entries map[string]*entry
}

func New() *Store { return &Store{entries: map[string]*entry{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	// Fast path: readers don't block each other.
	s.mu.RLock()
	e, ok := s.entries[key]
	if ok {
		done, val := e.done, e.val
		s.mu.RUnlock()
		if done {
			return val, nil
		}
		return "", fmt.Errorf("key %q: %w", key, ErrInProgress)
	}
	s.mu.RUnlock()

	// Not there: claim it.
	s.mu.Lock()
	s.entries[key] = &entry{}
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.entries, key)
		return v, err
	}
	s.entries[key] = &entry{done: true, val: v}
	return v, nil
}
