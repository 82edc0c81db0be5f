package fencing

import (
	"context"
	"fmt"
	"sync"
)

// Store serialises the writes of each key with a one-slot channel per key
// (kept in a sync.Map), so that a writer waiting for its key can give up
// when its context ends.
type Store struct {
	kv    KV
	slots sync.Map // key -> chan struct{}
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv}
}

func (s *Store) slot(key string) chan struct{} {
	if c, ok := s.slots.Load(key); ok {
		return c.(chan struct{})
	}
	c, _ := s.slots.LoadOrStore(key, make(chan struct{}, 1))
	return c.(chan struct{})
}

// Write stores value under key if token is at least the highest token key
// has accepted.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	if token == 0 {
		return fmt.Errorf("write %q with token 0: %w", key, ErrStaleToken)
	}
	c := s.slot(key)
	select {
	case c <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("write %q with token %d: %w", key, token, ctx.Err())
	}
	defer func() { <-c }()
	cur, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q with token %d: get: %w", key, token, err)
	}
	if ok && token < cur.Token {
		return fmt.Errorf("write %q with token %d (key has %d): %w", key, token, cur.Token, ErrStaleToken)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	if err := s.kv.Put(ctx, key, FencedValue{Value: value, Token: token}); err != nil {
		return fmt.Errorf("write %q with token %d: put: %w", key, token, err)
	}
	return nil
}

// Read returns what key holds.
func (s *Store) Read(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	v, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return FencedValue{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	return v, ok, nil
}
