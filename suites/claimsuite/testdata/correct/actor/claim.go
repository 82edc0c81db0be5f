// Package claim runs a piece of work at most once per idempotency key.
//
// Style: one actor goroutine owns all the records; callers talk to it with
// request/reply messages. The work itself runs in the caller's goroutine,
// outside the actor, so the actor only does quick bookkeeping.
package claim

import (
	"context"
	"errors"
	"fmt"
)

var ErrInProgress = errors.New("claim: work for this key is in progress")

type opKind int

const (
	opClaim    opKind = iota // reply: claimed? / pending / done+value
	opComplete               // record success
	opRelease                // forget a failed claim
)

type reply struct {
	claimed bool
	done    bool
	val     string
}

type request struct {
	kind  opKind
	key   string
	val   string
	reply chan reply
}

type record struct {
	done bool
	val  string
}

type Store struct {
	reqs chan request
}

func New() *Store {
	s := &Store{reqs: make(chan request)}
	go s.loop()
	return s
}

func (s *Store) loop() {
	records := map[string]*record{}
	for req := range s.reqs {
		switch req.kind {
		case opClaim:
			if r, ok := records[req.key]; ok {
				req.reply <- reply{done: r.done, val: r.val}
				continue
			}
			records[req.key] = &record{}
			req.reply <- reply{claimed: true}
		case opComplete:
			records[req.key] = &record{done: true, val: req.val}
			req.reply <- reply{}
		case opRelease:
			delete(records, req.key)
			req.reply <- reply{}
		}
	}
}

func (s *Store) call(kind opKind, key, val string) reply {
	ch := make(chan reply, 1)
	s.reqs <- request{kind: kind, key: key, val: val, reply: ch}
	return <-ch
}

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	r := s.call(opClaim, key, "")
	if !r.claimed {
		if r.done {
			return r.val, nil
		}
		return "", fmt.Errorf("key %q: %w", key, ErrInProgress)
	}
	v, err := work(ctx)
	if err != nil {
		s.call(opRelease, key, "")
		return v, err
	}
	s.call(opComplete, key, v)
	return v, nil
}
