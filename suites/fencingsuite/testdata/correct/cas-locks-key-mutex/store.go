package fencing

import (
	"context"
	"fmt"
	"sync"

	"github.com/fourth-outcome/labkit/task"
)

// Store holds one mutex per key across the Get and the Put, so
// writes to different keys never wait for each other.
type Store struct {
	kv task.KV

	mu   sync.Mutex
	keys map[string]*sync.Mutex
}

// NewStore returns a store over kv.
func NewStore(kv task.KV) *Store {
	return &Store{kv: kv, keys: map[string]*sync.Mutex{}}
}

func (s *Store) lock(key string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.keys[key]
	if !ok {
		m = &sync.Mutex{}
		s.keys[key] = m
	}
	return m
}

// Write stores value if token is at least the key's, or refuses with ErrStaleToken.
func (s *Store) Write(ctx context.Context, token task.FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if token == 0 {
		return task.ErrStaleToken
	}
	m := s.lock(key)
	m.Lock()
	defer m.Unlock()
	cur, _, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q: %w", key, err)
	}
	if token < cur.Token {
		return fmt.Errorf("write %q with %d, key at %d: %w", key, token, cur.Token, task.ErrStaleToken)
	}
	return s.kv.Put(ctx, key, task.FencedValue{Value: value, Token: token})
}

// Read returns what key holds.
func (s *Store) Read(ctx context.Context, key string) (task.FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return task.FencedValue{}, false, err
	}
	return s.kv.Get(ctx, key)
}
