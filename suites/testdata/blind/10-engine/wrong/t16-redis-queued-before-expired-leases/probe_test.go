package engine

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// A job whose lease ended at t=30s became visible before a job submitted at
// t=40s: at t=50s, Lease delivers the first.
func TestProbeExpiredLeaseBeforeLaterSubmission(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{{DocumentID: "d", Recipient: "a@x.io"}}
	if _, err := r.Submit(ctx, Job{ID: "old", Account: "acc", Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lease(ctx, "crasher"); err != nil { // ends at t=30s
		t.Fatal(err)
	}
	now = t0.Add(40 * time.Second)
	if _, err := r.Submit(ctx, Job{ID: "new", Account: "acc", Steps: steps}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(50 * time.Second)
	l, err := r.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if l.Job.ID != "old" {
		t.Fatalf("Lease at t=50s delivered %v; want job old (visible since t=30s) before job new (visible since t=40s)", l)
	}
}
