package claimsuite_test

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"testing"

	"github.com/fourth-outcome/labkit/suites/claimsuite"
)

func TestLabIsValid(t *testing.T) {
	if err := claimsuite.Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := claimsuite.Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The suite must pass every correct store, whatever its style. Two styles
// besides the solution's map behind one mutex:

var errInProgress = errors.New("in progress")

// TestActorStore runs the suite on a store in the Go actor style: New
// starts one goroutine that owns the records, and Do sends it requests with
// a reply channel. The store has no Close method, so its goroutine is still
// waiting for a request when each case ends.
func TestActorStore(t *testing.T) {
	claimsuite.Run(t, newActorStore, errInProgress)
}

// TestShardedStore runs the suite on a store that spreads its keys over
// shards, each a map behind its own mutex.
func TestShardedStore(t *testing.T) {
	claimsuite.Run(t, newShardedStore, errInProgress)
}

type actorStore struct {
	requests chan request
}

type request struct {
	key    string
	op     int    // claim, complete or release
	result string // for complete
	reply  chan answer
}

const (
	claim = iota
	complete
	release
)

type answer struct {
	claimed bool   // for claim: the caller holds the key and must run the work
	done    bool   // for claim: the key has completed; result is its value
	result  string // for claim
}

func newActorStore() *actorStore {
	s := &actorStore{requests: make(chan request)}
	go s.loop()
	return s
}

// loop owns the records: nobody else touches them, so they need no lock.
func (s *actorStore) loop() {
	type record struct {
		done   bool
		result string
	}
	records := map[string]record{}
	for r := range s.requests {
		switch r.op {
		case claim:
			rec, ok := records[r.key]
			if !ok {
				records[r.key] = record{}
			}
			r.reply <- answer{claimed: !ok, done: rec.done, result: rec.result}
		case complete:
			records[r.key] = record{done: true, result: r.result}
			r.reply <- answer{}
		case release:
			delete(records, r.key)
			r.reply <- answer{}
		}
	}
}

func (s *actorStore) ask(r request) answer {
	r.reply = make(chan answer)
	s.requests <- r
	return <-r.reply
}

func (s *actorStore) Do(ctx context.Context, key string, work func(context.Context) (string, error)) (string, error) {
	a := s.ask(request{key: key, op: claim})
	switch {
	case a.done:
		return a.result, nil
	case !a.claimed:
		return "", fmt.Errorf("do %q: %w", key, errInProgress)
	}
	v, err := work(ctx)
	if err != nil {
		s.ask(request{key: key, op: release})
		return v, err
	}
	s.ask(request{key: key, op: complete, result: v})
	return v, nil
}

type shardedStore struct {
	seed   maphash.Seed
	shards [16]struct {
		mu      sync.Mutex
		records map[string]*string // nil: pending
	}
}

func newShardedStore() *shardedStore {
	s := &shardedStore{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].records = map[string]*string{}
	}
	return s
}

func (s *shardedStore) Do(ctx context.Context, key string, work func(context.Context) (string, error)) (string, error) {
	sh := &s.shards[maphash.String(s.seed, key)%uint64(len(s.shards))]
	sh.mu.Lock()
	rec, ok := sh.records[key]
	if !ok {
		sh.records[key] = nil
	}
	sh.mu.Unlock()
	switch {
	case ok && rec != nil:
		return *rec, nil
	case ok:
		return "", fmt.Errorf("do %q: %w", key, errInProgress)
	}
	v, err := work(ctx)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if err != nil {
		delete(sh.records, key)
		return v, err
	}
	sh.records[key] = &v
	return v, nil
}
