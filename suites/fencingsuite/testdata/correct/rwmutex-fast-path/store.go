package fencing

import (
	"context"
	"fmt"
	"sync"
)

// Store is a key-value store protected by fencing tokens: the resource that
// Locks' grants are for. It keeps each key's value, with the token of the
// write that stored it, in a KV, and is safe for concurrent use. Build it
// with NewStore.
//
// Tokens only increase, so the token stored with a key's value is also the
// highest the key has accepted: the fence a new write must not fall below.
// The KV has no conditional write, so Write holds mu from the Get that
// reads the fence to the Put that moves it: nobody else's write to any key
// can land in between. One mutex for every key is the simplest correct
// choice; it makes writes to different keys wait for each other's KV
// calls, which a store with one mutex per key would not.
type Store struct {
	kv KV
	mu sync.RWMutex // held across the Get and the Put of every Write
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{kv: kv}
}

// Write stores value under key if token is at least the highest token key
// has accepted. An equal token is accepted: the current holder writing
// again. A lower token, or the zero token, is refused with an error
// wrapping ErrStaleToken, and the key keeps what it had. Keys are fenced
// independently: a token written to one key does not fence another. When
// the KV fails, Write returns its error, wrapped; if the Get failed,
// nothing was written.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	if token == 0 {
		return fmt.Errorf("write %q with token 0: %w (0 is never granted: the writer holds no lock)", key, ErrStaleToken)
	}
	// The check and the write are one step under the lock. Split in two, a
	// write with token 33 could pass the check, wait, and land after a
	// write with token 34, undoing it.
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, _, err := s.kv.Get(ctx, key)
	if err != nil {
		// Without the key's token there is no check, so no write.
		return fmt.Errorf("write %q with token %d: read the key's token: %w", key, token, err)
	}
	if token < cur.Token {
		return fmt.Errorf("write %q with token %d: %w (the key has accepted token %d)", key, token, ErrStaleToken, cur.Token)
	}
	if err := s.kv.Put(ctx, key, FencedValue{Value: value, Token: token}); err != nil {
		return fmt.Errorf("write %q with token %d: %w", key, token, err)
	}
	return nil
}

// Read returns what key holds: the value of the last write it accepted,
// and that write's token. It returns false when no write to key was ever
// accepted.
func (s *Store) Read(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	s.mu.RLock() // a Read waits only for a Write in progress
	defer s.mu.RUnlock()
	v, ok, err := s.kv.Get(ctx, key)
	if err != nil {
		return FencedValue{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	return v, ok, nil
}
