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

// claimTimeout: a claim older than this is assumed abandoned (its worker
// crashed), so another caller may take the key over instead of being stuck.
const claimTimeout = 30 * time.Second

// now is a variable so tests can move time.
var now = time.Now

type record struct {
	done    bool
	val     string
	claimed time.Time
}

type Store struct {
	mu      sync.Mutex
	records map[string]*record
}

func New() *Store { return &Store{records: map[string]*record{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	r, ok := s.records[key]
	if ok && r.done {
		s.mu.Unlock()
		return r.val, nil
	}
	if ok && now().Sub(r.claimed) < claimTimeout {
		s.mu.Unlock()
		return "", fmt.Errorf("%s: %w", key, ErrInProgress)
	}
	r = &record{claimed: now()}
	s.records[key] = r
	s.mu.Unlock()

	v, err := work(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.records[key] == r {
			delete(s.records, key)
		}
		return v, err
	}
	r.done, r.val = true, v
	s.records[key] = r
	return v, nil
}
