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

// resultTTL bounds memory: completed results are forgotten after a day,
// long after the queue has stopped redelivering the task.
const resultTTL = 24 * time.Hour

// now is a variable so tests can move time.
var now = time.Now

type record struct {
	done     bool
	val      string
	finished time.Time
}

type Store struct {
	mu      sync.Mutex
	records map[string]*record
}

func New() *Store { return &Store{records: map[string]*record{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	if r, ok := s.records[key]; ok {
		if r.done && now().Sub(r.finished) > resultTTL {
			delete(s.records, key) // expired: forget it
		} else {
			done, val := r.done, r.val
			s.mu.Unlock()
			if done {
				return val, nil
			}
			return "", fmt.Errorf("%s: %w", key, ErrInProgress)
		}
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
	r.done, r.val, r.finished = true, v, now()
	return v, nil
}
