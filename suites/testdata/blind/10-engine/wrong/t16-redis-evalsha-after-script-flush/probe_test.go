package engine

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// The script cache is flushed (SCRIPT FLUSH, a restarted or failed-over
// server that kept its data): the backend keeps working on the same data.
func TestProbeWorksAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{{DocumentID: "d", Recipient: "a@x.io"}}
	if ok, err := r.Submit(ctx, Job{ID: "a", Account: "acc", Steps: steps}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Submit(ctx, Job{ID: "b", Account: "acc", Steps: steps}); !ok || err != nil {
		t.Fatalf("Submit(b) after SCRIPT FLUSH = %v, %v; want true, nil", ok, err)
	}
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatalf("Lease after SCRIPT FLUSH: %v", err)
	}
	if err := r.Complete(ctx, l); err != nil {
		t.Fatalf("Complete after SCRIPT FLUSH: %v", err)
	}
}
