package claim

import (
	"context"
	"errors"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

// Do crashes the process from a goroutine nobody can recover.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	done := make(chan struct{})
	go func() {
		var m map[string]int
		m[key] = 1 // panics: assignment to entry in nil map
		close(done)
	}()
	<-done
	return "", nil
}
