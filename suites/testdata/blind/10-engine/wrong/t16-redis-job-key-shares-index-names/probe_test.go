package engine

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// A job ID is any non-empty string, including the names of the backend's
// other keys: jobs "vis" and "seq" are stored and leased like any other.
func TestProbeJobIDsThatNameOtherKeys(t *testing.T) {
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
	for _, id := range []string{"a", "vis", "seq"} {
		if ok, err := r.Submit(ctx, Job{ID: id, Account: "acc", Steps: steps}); !ok || err != nil {
			t.Fatalf("Submit(%q) = %v, %v; want true, nil", id, ok, err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Lease(ctx, "w"); err != nil {
			t.Fatalf("Lease %d: %v", i+1, err)
		}
	}
	for _, id := range []string{"a", "vis", "seq"} {
		in, err := r.Inspect(ctx, id)
		if err != nil || in.State != "leased" || in.Deliveries != 1 {
			t.Fatalf("Inspect(%q) = %v, %v; want leased once", id, in, err)
		}
	}
}
