// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type state int

const (
	pending state = iota + 1
	done
)

type record struct {
	state state
	val   string
}

type Store struct {
	mu      sync.Mutex
	records map[string]record
}

func New() *Store { return &Store{records: map[string]record{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	rec, ok := s.records[key]
	switch {
	case ok && rec.state == done:
		s.mu.Unlock()
		return rec.val, nil
	case ok:
		s.mu.Unlock()
		return "", fmt.Errorf("%s: %w", key, ErrInProgress)
	}
	rec = record{state: pending}
	s.records[key] = rec
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.records, key)
		return v, err
	}
	rec.state, rec.val = done, v // update the record with the result
	return v, nil
}
