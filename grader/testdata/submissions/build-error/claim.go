package claim

import "context"

var ErrInProgress = errInProgress // undefined on purpose

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	return work(ctx), nil // wrong number of values
}
