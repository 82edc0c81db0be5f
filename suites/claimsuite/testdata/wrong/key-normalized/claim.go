// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// normalize makes " Task-42" and "task-42" the same key, so sloppy
// producers can't sneak a duplicate past the store.
func normalize(key string) string { return strings.ToLower(strings.TrimSpace(key)) }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	key = normalize(key)
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
		return v, err
	}
	r.done, r.val = true, v
	return v, nil
}
