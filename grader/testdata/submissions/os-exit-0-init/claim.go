package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

// init ends the test binary with success before any test runs: it must
// never count as a pass.
func init() { os.Exit(0) }

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	return work(ctx)
}
