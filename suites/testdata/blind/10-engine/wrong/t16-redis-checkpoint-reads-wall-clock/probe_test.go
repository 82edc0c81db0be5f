package engine

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// Checkpoint renews the lease from the backend's clock, Options.Now, and
// refuses a lease that ended by that clock.
func TestProbeCheckpointReadsTheInjectedClock(t *testing.T) {
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
	if _, err := r.Submit(ctx, j); err != nil {
		t.Fatal(err)
	}
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	l2, err := r.Checkpoint(ctx, l, 1)
	if err != nil {
		t.Fatalf("Checkpoint 10s into a 30s lease: %v", err)
	}
	if want := now.Add(30 * time.Second); !l2.Expires.Equal(want) {
		t.Fatalf("Checkpoint at %v renewed to %v, want %v", now, l2.Expires, want)
	}
}
