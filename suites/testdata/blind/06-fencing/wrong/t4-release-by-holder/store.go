package fencing

import (
	"context"
	"fmt"
	"sync"
)

// Store is a key-value store protected by fencing tokens. Each key has its
// own mutex (found in a sync.Map), held across a Write's Get, check and
// Put, so writes to one key are serialized and writes to different keys
// are not.
type Store struct {
	kv    KV
	locks sync.Map // key -> *sync.Mutex
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv}
}

func (s *Store) lock(key string) *sync.Mutex {
	m, _ := s.locks.LoadOrStore(key, new(sync.Mutex))
	return m.(*sync.Mutex)
}

// Write stores value under key if token is at least the highest token key
// has accepted.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fencing: write %q: %w", key, err)
	}
	if token == 0 {
		return fmt.Errorf("fencing: write %q with the zero token: %w", key, ErrStaleToken)
	}
	mu := s.lock(key)
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fencing: write %q: %w", key, err)
	}
	cur, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("fencing: write %q: reading its token: %w", key, err)
	}
	if ok && token < cur.Token {
		return fmt.Errorf("fencing: write %q with token %d, key has %d: %w", key, token, cur.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, key, FencedValue{Value: value, Token: token}); err != nil {
		return fmt.Errorf("fencing: write %q: %w", key, err)
	}
	return nil
}

// Read returns what key holds.
func (s *Store) Read(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, fmt.Errorf("fencing: read %q: %w", key, err)
	}
	v, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return FencedValue{}, false, fmt.Errorf("fencing: read %q: %w", key, err)
	}
	return v, ok, nil
}
