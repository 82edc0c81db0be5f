package claim

import (
	"context"
	"errors"
)

var ErrInProgress = errors.New("in progress")

// Store forgets the lock: concurrent calls race on the map.
type Store struct{ results map[string]string }

func New() *Store { return &Store{results: map[string]string{}} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	if v, ok := s.results[key]; ok {
		return v, nil
	}
	s.results[key] = ""
	v, err := work(ctx)
	if err != nil {
		delete(s.results, key)
		return v, err
	}
	s.results[key] = v
	return v, nil
}
