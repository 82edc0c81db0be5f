package claim

import (
	"context"
	"errors"
	"sync"
)

var ErrInProgress = errors.New("in progress")

type Store struct{ mu sync.Mutex }

func New() *Store { return &Store{} }

// Do locks and never unlocks: the second call waits forever.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	s.mu.Lock()
	return work(ctx)
}
