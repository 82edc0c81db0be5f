// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type entry struct {
	done bool
	val  string
}

// Store serialises all calls with one mutex, so no two callers can ever
// race on a key.
type Store struct {
	mu      sync.Mutex
	entries map[string]*entry
}

func New() *Store { return &Store{entries: map[string]*entry{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		if e.done {
			return e.val, nil
		}
		return "", ErrInProgress
	}
	e := &entry{}
	s.entries[key] = e
	v, err := work(ctx)
	if err != nil {
		delete(s.entries, key)
		return v, err
	}
	e.done, e.val = true, v
	return v, nil
}
