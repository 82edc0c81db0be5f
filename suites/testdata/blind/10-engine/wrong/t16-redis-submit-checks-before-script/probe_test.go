package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

type probeKey struct{}

// parkHook parks the marked caller after its first command to Redis (past
// the connection's handshake) until
// release is closed, and closes parked when it does.
type parkHook struct {
	once    sync.Once
	parked  chan struct{}
	release chan struct{}
}

func (h *parkHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *parkHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (h *parkHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		switch cmd.Name() {
		case "hello", "client", "auth", "select", "ping":
			return err // the connection's handshake, not the operation
		}
		if ctx.Value(probeKey{}) != nil {
			h.once.Do(func() {
				close(h.parked)
				<-h.release
			})
		}
		return err
	}
}

// Two submissions of one ID, from two processes, store it once: one gets
// true, the other false. Process A is parked after its first command.
func TestProbeTwoSubmissionsOfOneIDStoreItOnce(t *testing.T) {
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	o := Options{Now: func() time.Time { return now }}
	rdbA := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdbA.Close()
	h := &parkHook{parked: make(chan struct{}), release: make(chan struct{})}
	rdbA.AddHook(h)
	rdbB := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdbB.Close()
	a, err := NewRedis(rdbA, "ns", o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRedis(rdbB, "ns", o)
	if err != nil {
		t.Fatal(err)
	}
	j := Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}
	type res struct {
		ok  bool
		err error
	}
	aDone := make(chan res, 1)
	go func() {
		ok, err := a.Submit(context.WithValue(context.Background(), probeKey{}, true), j)
		aDone <- res{ok, err}
	}()
	<-h.parked
	okB, errB := b.Submit(context.Background(), j)
	close(h.release)
	ra := <-aDone
	if ra.err != nil || errB != nil {
		t.Fatalf("A: %v, %v; B: %v, %v", ra.ok, ra.err, okB, errB)
	}
	if ra.ok == okB {
		t.Fatalf("A returned %v and B returned %v: want exactly one true (the job stored once)", ra.ok, okB)
	}
}
