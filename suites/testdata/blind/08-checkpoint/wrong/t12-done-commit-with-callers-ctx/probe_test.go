package checkpoint

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = strconv.Itoa
var _ = fakeclock.Now
var _ = time.Second

type pkv struct {
	mu    sync.Mutex
	m     map[string]Checkpoint
	onGet func(taskID string)
}

func newPKV() *pkv { return &pkv{m: map[string]Checkpoint{}} }

func (k *pkv) Get(ctx context.Context, id string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	k.mu.Lock()
	h := k.onGet
	cp, ok := k.m[id]
	k.mu.Unlock()
	if h != nil {
		h(id) // after reading: the caller holds what it read
	}
	return cp, ok, nil
}

func (k *pkv) Put(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[cp.TaskID] = cp
	return nil
}

type papply struct{ key, payload string }

type psink struct {
	mu      sync.Mutex
	applied []papply
	done    map[string]string
	hook    func(ctx context.Context, key, payload string) error
}

func newPSink() *psink { return &psink{done: map[string]string{}} }

func (s *psink) Apply(ctx context.Context, key, payload string) error {
	if s.hook != nil {
		if err := s.hook(ctx, key, payload); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = append(s.applied, papply{key, payload})
	if p, ok := s.done[key]; ok {
		if p != payload {
			return ErrEffectMismatch
		}
		return nil
	}
	s.done[key] = payload
	return nil
}

func (s *psink) list() []papply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]papply(nil), s.applied...)
}

func pstep(name string, f func(rec Recorder) (string, error)) Step {
	return Step{Name: name, Effect: f}
}

func plain(name string) Step {
	return pstep(name, func(Recorder) (string, error) { return name, nil })
}

func TestProbe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := NewStore(newPKV())
	sink := newPSink()
	sink.hook = func(context.Context, string, string) error { cancel(); return nil }
	r, _ := NewRunner(Options{Store: store, Sink: sink, Token: 1})
	_ = r.Run(ctx, "t", []Step{plain("a"), plain("b")})
	cp, ok, err := store.Load(context.Background(), "t")
	if err != nil || !ok || cp.Next != 1 {
		t.Fatalf("after an applied effect the checkpoint is %v %v %v, want Next 1", cp, ok, err)
	}
}
