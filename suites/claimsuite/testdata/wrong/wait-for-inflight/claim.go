// Package claim runs a piece of work at most once per idempotency key.
package claim

import (
	"context"
	"errors"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type call struct {
	done chan struct{}
	val  string
	err  error
}

// Store: duplicates that arrive while the work runs wait for it and share
// its result (like singleflight), so they never see a spurious error.
type Store struct {
	mu    sync.Mutex
	calls map[string]*call
}

func New() *Store { return &Store{calls: map[string]*call{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if c, ok := s.calls[key]; ok {
		s.mu.Unlock()
		select {
		case <-c.done:
			if c.err != nil {
				return "", c.err
			}
			return c.val, nil
		case <-ctx.Done():
			// gave up waiting: the work is still running
			return "", ErrInProgress
		}
	}
	c := &call{done: make(chan struct{})}
	s.calls[key] = c
	s.mu.Unlock()

	c.val, c.err = work(ctx)

	s.mu.Lock()
	if c.err != nil {
		delete(s.calls, key)
	}
	s.mu.Unlock()
	close(c.done)
	return c.val, c.err
}
