// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

// grace: most work finishes quickly, so a duplicate waits this long for it
// before giving up with ErrInProgress; that saves the caller a retry.
const grace = 200 * time.Millisecond

type record struct {
	done chan struct{}
	ok   bool
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
		s.mu.Unlock()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-r.done:
			if r.ok {
				return r.val, nil
			}
			return "", fmt.Errorf("%s: previous attempt failed, try again: %w", key, ErrInProgress)
		case <-t.C:
			return "", fmt.Errorf("%s: %w", key, ErrInProgress)
		case <-ctx.Done():
			return "", fmt.Errorf("%s: %w", key, ErrInProgress)
		}
	}
	r := &record{done: make(chan struct{})}
	s.records[key] = r
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	if err != nil {
		delete(s.records, key)
	} else {
		r.ok, r.val = true, v
	}
	s.mu.Unlock()
	close(r.done)
	return v, err
}
