package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// Checkpoint renews the lease and keeps its token.
func TestProbeCheckpointKeepsTheToken(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	j := Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d1", Recipient: "a@x.io"}, {DocumentID: "d2", Recipient: "a@x.io"}}}
	if ok, err := r.Submit(ctx, j); !ok || err != nil {
		t.Fatal(ok, err)
	}
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	l2, err := r.Checkpoint(ctx, l, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Token != l.Token || l2.Step != 1 || !l2.Expires.Equal(now.Add(30*time.Second)) {
		t.Fatalf("Checkpoint(%v, 1) = %v expiring %v; want token %d, step 1, expiring %v", l, l2, l2.Expires, l.Token, now.Add(30*time.Second))
	}
	if in, err := r.Inspect(ctx, "j"); err != nil || in.Token != l.Token {
		t.Fatalf("Inspect after Checkpoint = %v, %v; want token %d", in, err, l.Token)
	}
}

// (Sanity of the probe: a zombie's Checkpoint is still ErrLeaseLost.)
func TestProbeCheckpointOfAnEndedLease(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d1", Recipient: "a@x.io"}}}); err != nil {
		t.Fatal(err)
	}
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	now = l.Expires
	if _, err := r.Checkpoint(ctx, l, 1); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Checkpoint of an ended lease: %v, want ErrLeaseLost", err)
	}
}
