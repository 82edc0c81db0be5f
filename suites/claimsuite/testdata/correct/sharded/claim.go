// Package claim runs a piece of work at most once per idempotency key.
//
// Style: sharded locks. Keys are spread over 64 shards by an FNV-1a hash of
// their bytes; each shard has its own mutex and map, so claims on unrelated
// keys rarely contend. No lock is held while work runs.
package claim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

const shardCount = 64

type status uint8

const (
	pending status = iota + 1
	succeeded
)

type record struct {
	status status
	val    string
}

type shard struct {
	mu      sync.Mutex
	records map[string]record
}

type Store struct {
	shards [shardCount]shard
}

func New() *Store {
	s := &Store{}
	for i := range s.shards {
		s.shards[i].records = make(map[string]record)
	}
	return s
}

func (s *Store) shardFor(key string) *shard {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &s.shards[h.Sum32()%shardCount]
}

// claim returns (claimed, existing record).
func (sh *shard) claim(key string) (bool, record) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if r, ok := sh.records[key]; ok {
		return false, r
	}
	sh.records[key] = record{status: pending}
	return true, record{}
}

func (sh *shard) finish(key, val string, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err != nil {
		delete(sh.records, key)
		return
	}
	sh.records[key] = record{status: succeeded, val: val}
}

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	sh := s.shardFor(key)
	claimed, r := sh.claim(key)
	if !claimed {
		if r.status == succeeded {
			return r.val, nil
		}
		return "", fmt.Errorf("key %q: %w", key, ErrInProgress)
	}
	v, err := work(ctx)
	sh.finish(key, v, err)
	return v, err
}
