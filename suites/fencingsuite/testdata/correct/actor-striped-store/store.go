package fencing

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
)

// Store is a key-value store protected by fencing tokens. A Write holds its
// key's stripe, one of 32 mutexes chosen by a hash of the key, from the Get
// that reads the fence to the Put that moves it: writes to one key are one
// at a time, writes to most other keys do not wait for each other.
type Store struct {
	kv      KV
	seed    maphash.Seed
	stripes [32]sync.Mutex
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, seed: maphash.MakeSeed()}
}

func (s *Store) stripe(key string) *sync.Mutex {
	return &s.stripes[maphash.String(s.seed, key)%uint64(len(s.stripes))]
}

// Write stores value under key if token is at least the highest token key
// has accepted.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q: %w", key, err)
	}
	if token == 0 {
		return fmt.Errorf("write %q with token 0: %w", key, ErrStaleToken)
	}
	m := s.stripe(key)
	m.Lock()
	defer m.Unlock()
	cur, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q: get: %w", key, err)
	}
	if ok && token < cur.Token {
		return fmt.Errorf("write %q with token %d: %w (fence %d)", key, token, ErrStaleToken, cur.Token)
	}
	if err := s.kv.Put(ctx, key, FencedValue{Value: value, Token: token}); err != nil {
		return fmt.Errorf("write %q: put: %w", key, err)
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
