package fakeredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
)

func TestMiniredisTTLFollowsVirtualTime(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		m, rdb := fakeredis.Start(t)
		if err := rdb.Set(ctx, "k", "v", 10*time.Second).Err(); err != nil {
			t.Fatalf("SET: %v", err)
		}
		fakeclock.Advance(9 * time.Second)
		if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
			t.Fatalf("GET after 9s = %q, %v, want \"v\", nil", got, err)
		}
		if ttl := rdb.PTTL(ctx, "k").Val(); ttl != time.Second {
			t.Fatalf("PTTL after 9s = %v, want 1s", ttl)
		}
		fakeclock.Advance(time.Second)
		if _, err := rdb.Get(ctx, "k").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("GET after 10s: err = %v, want redis.Nil (expired)", err)
		}
		// A second client (another process) sees the same server.
		other := fakeredis.NewClient(t, m)
		if err := other.Set(ctx, "k2", "v2", 0).Err(); err != nil {
			t.Fatalf("SET from second client: %v", err)
		}
		if got := rdb.Get(ctx, "k2").Val(); got != "v2" {
			t.Fatalf("GET k2 from first client = %q, want \"v2\"", got)
		}
	})
}

func TestMiniredisTTLDoesNotMoveWithoutVirtualTime(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		_, rdb := fakeredis.Start(t)
		rdb.Set(ctx, "k", "v", time.Hour)
		for range 100 {
			rdb.Get(ctx, "k") // real work, real time passes; virtual time does not
		}
		if ttl := rdb.PTTL(ctx, "k").Val(); ttl != time.Hour {
			t.Fatalf("PTTL with no virtual time passed = %v, want 1h", ttl)
		}
	})
}
