package claim

import (
	"context"
	"errors"
)

var ErrInProgress = errors.New("in progress")

type Store struct{ buf []byte }

// New allocates 4 GB and touches every page of it.
func New() *Store {
	b := make([]byte, 4<<30)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return &Store{buf: b}
}

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	return work(ctx)
}
