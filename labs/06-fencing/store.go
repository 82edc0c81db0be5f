package fencing

import (
	"context"
	"fmt"
)

// Store is a key-value store protected by fencing tokens: the resource that
// Locks' grants are for. It keeps each key's value, with the token of the
// write that stored it, in a KV, and must be safe for concurrent use. Build
// it with NewStore.
type Store struct {
	// TODO: the KV, and whatever makes a Write's check and write one step.
}

// NewStore returns a store that keeps its values in kv.
func NewStore(kv KV) *Store {
	return &Store{}
}

// Write stores value under key if token is at least the highest token key
// has accepted. An equal token is accepted: the current holder writing
// again. A lower token, or the zero token, is refused with an error
// wrapping ErrStaleToken, and the key keeps what it had. Keys are fenced
// independently: a token written to one key does not fence another. The
// check and the write are one atomic step. When the KV fails, Write
// returns its error, wrapped; if it could not read the key's token, it
// writes nothing. When ctx is done it returns an error wrapping ctx.Err()
// and writes nothing.
func (s *Store) Write(ctx context.Context, token FencingToken, key, value string) error {
	// TODO: implement.
	return fmt.Errorf("write %q with token %d: %w", key, token, ErrNotImplemented)
}

// Read returns what key holds: the value of the last write it accepted,
// and that write's token. It returns false when no write to key was ever
// accepted. When the KV fails, or ctx is done, it returns an error wrapping
// that error.
func (s *Store) Read(ctx context.Context, key string) (FencedValue, bool, error) {
	// TODO: implement.
	return FencedValue{}, false, fmt.Errorf("read %q: %w", key, ErrNotImplemented)
}
