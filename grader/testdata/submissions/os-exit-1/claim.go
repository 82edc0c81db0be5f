package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

// Do gives up on the whole process: a hostile or confused submission.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	os.Exit(1)
	return "", nil
}
