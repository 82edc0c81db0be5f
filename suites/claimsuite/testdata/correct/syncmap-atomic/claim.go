// Package claim runs a piece of work at most once per idempotency key.
//
// Style: lock-free. A sync.Map holds one *entry per key; LoadOrStore is the
// atomic claim, an atomic state publishes completion (the value is written
// before the state, so a reader that sees "done" sees the value), and
// CompareAndDelete releases a failed claim without touching a newer one.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

const (
	statePending int32 = iota
	stateDone
)

type entry struct {
	state atomic.Int32
	val   string // written once, before state becomes stateDone
}

type Store struct {
	entries sync.Map // string -> *entry
}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	mine := &entry{}
	got, loaded := s.entries.LoadOrStore(key, mine)
	if loaded {
		e := got.(*entry)
		if e.state.Load() == stateDone {
			return e.val, nil
		}
		return "", fmt.Errorf("key %q: %w", key, ErrInProgress)
	}
	v, err := work(ctx)
	if err != nil {
		s.entries.CompareAndDelete(key, mine)
		return v, err
	}
	mine.val = v
	mine.state.Store(stateDone)
	return v, nil
}
