package fencing

import (
	"context"
	"fmt"
	"sync"
)

// Store is a key-value store protected by fencing tokens. Build it with
// NewStore.
type Store struct {
	kv KV

	mu    sync.Mutex
	locks map[string]*keyLock
}

// keyLock serialises the writes of one key; refs counts the writes holding
// or waiting for it, so the entry is dropped only when nobody does.
type keyLock struct {
	ch   chan struct{}
	refs int
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv, locks: map[string]*keyLock{}}
}

func (s *Store) lock(ctx context.Context, key string) (func(), error) {
	s.mu.Lock()
	l, ok := s.locks[key]
	if !ok {
		l = &keyLock{ch: make(chan struct{}, 1)}
		s.locks[key] = l
	}
	l.refs++
	s.mu.Unlock()

	drop := func() {
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.locks, key)
		}
		s.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
	return func() {
		<-l.ch
		drop()
	}, nil
}

// Write stores value under key if token is at least the highest token key
// has accepted.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	defer unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	cur, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("write %q with token %d: read: %w", key, token, err)
	}
	if ok && token < cur.Token {
		return fmt.Errorf("write %q with token %d: key holds token %d: %w", key, token, cur.Token, ErrStaleToken)
	}
	if err := s.kv.Put(ctx, key, FencedValue{Value: value, Token: token}); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
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
